package dev.stagger.jobs;

import dev.stagger.jdbc.StoreException;
import java.sql.SQLException;

/**
 * This worker no longer owns the job: its lease expired and the job was rescued (and possibly
 * claimed elsewhere), or an operator changed it. Thrown by {@link JobContext#completeWithin} so
 * the caller's transaction rolls back instead of committing work for a job it does not own.
 */
public final class LeaseLostException extends StoreException {
    private static final long serialVersionUID = 1L;

    private final long jobId;
    private final int attempt;

    /** This worker no longer holds attempt {@code attempt} of job {@code jobId}. */
    public LeaseLostException(long jobId, int attempt) {
        super("job " + jobId + " attempt " + attempt + " is no longer held by this worker (lease lost)",
                new SQLException("the job's row did not match this worker's attempt", "02000"));
        this.jobId = jobId;
        this.attempt = attempt;
    }

    /** The job this worker lost. */
    public long jobId() {
        return jobId;
    }

    /** The attempt this worker was running. */
    public int attempt() {
        return attempt;
    }
}
