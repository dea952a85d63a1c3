package dev.stagger.jobs;

/**
 * The failure a job's attempt is decided with when the worker running it stopped extending its
 * lease (it died, froze, or lost the database for longer than the lease) and another worker took
 * the job back. The attempt counts as failed: the retry policy's classifier, backoff, attempt
 * limit and deadline decide it like any other failure. The default classifier retries it; a
 * policy with {@code abortOn(LeaseExpiredException.class)} sends the job to DEAD instead, for a
 * handler that must never start twice. Its entry in the job's history is a
 * {@link JobError#LEASE_EXPIRED}.
 */
public final class LeaseExpiredException extends Exception {
    private static final long serialVersionUID = 1L;

    private final long jobId;
    private final int attempt;

    /** The lease of {@code worker} on attempt {@code attempt} of job {@code jobId} expired. */
    public LeaseExpiredException(long jobId, int attempt, String worker) {
        super("worker " + worker + " stopped extending its lease on job " + jobId + " attempt " + attempt, null, false,
                false);
        this.jobId = jobId;
        this.attempt = attempt;
    }

    /** The job whose lease expired. */
    public long jobId() {
        return jobId;
    }

    /** The attempt that was lost. */
    public int attempt() {
        return attempt;
    }
}
