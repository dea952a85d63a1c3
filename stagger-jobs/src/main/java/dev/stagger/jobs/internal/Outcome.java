package dev.stagger.jobs.internal;

import dev.stagger.EndReason;
import dev.stagger.jobs.Job;
import dev.stagger.jobs.JobError;

/**
 * What became of one claimed attempt, waiting to be stored.
 *
 * @param runAtMillis the next run time for RETRY, SNOOZE and RELEASE
 * @param error the failure for RETRY and DEAD, else null
 * @param completedWithin SUCCEEDED by a handler that completed the job in its own transaction, so
 *     the pool's own completion finds the job already done
 * @param backoffState for RETRY, the backoff schedule's state to store for the next attempt
 * @param endReason for DEAD, why the job ended (as a core call would), else null
 */
public record Outcome(Kind kind, Job job, long runAtMillis, JobError error, long runNanos, boolean completedWithin,
                      long backoffState, EndReason endReason) {
    /** An outcome the pool itself stores. */
    public Outcome(Kind kind, Job job, long runAtMillis, JobError error, long runNanos) {
        this(kind, job, runAtMillis, error, runNanos, false, 0, null);
    }

    /** The kinds of outcome. RELEASE puts back a job the pool claimed but is giving up on while stopping. */
    public enum Kind { SUCCEEDED, RETRY, DEAD, SNOOZE, RELEASE }
}
