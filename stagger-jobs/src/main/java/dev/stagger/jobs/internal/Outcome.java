package dev.stagger.jobs.internal;

import dev.stagger.EndReason;
import dev.stagger.jobs.Job;
import dev.stagger.jobs.JobError;
import org.jspecify.annotations.Nullable;

/**
 * What became of one claimed attempt, waiting to be stored.
 *
 * @param delayMillis for RETRY, SNOOZE and RELEASE, how long after the store's "now" the job runs again
 * @param error the failure for RETRY and DEAD, else null
 * @param completedWithin SUCCEEDED by a handler that completed the job in its own transaction, so
 *     the pool's own completion finds the job already done
 * @param backoffState for RETRY, the backoff schedule's state to store for the next attempt
 * @param endReason for DEAD, why the job ended (as a core call would), else null
 */
public record Outcome(Kind kind, Job job, long delayMillis, @Nullable JobError error, long runNanos,
                      boolean completedWithin, long backoffState, @Nullable EndReason endReason) {

    /** The kinds of outcome. RELEASE puts back a job the pool claimed but is giving up on while stopping. */
    public enum Kind { SUCCEEDED, RETRY, DEAD, SNOOZE, RELEASE }

    static Outcome succeeded(Job job, long runNanos, boolean completedWithin) {
        return new Outcome(Kind.SUCCEEDED, job, 0, null, runNanos, completedWithin, 0, null);
    }

    static Outcome retry(Job job, long delayMillis, JobError error, long runNanos, long backoffState) {
        return new Outcome(Kind.RETRY, job, delayMillis, error, runNanos, false, backoffState, null);
    }

    static Outcome dead(Job job, JobError error, long runNanos, EndReason reason) {
        return new Outcome(Kind.DEAD, job, 0, error, runNanos, false, 0, reason);
    }

    static Outcome snooze(Job job, long delayMillis, long runNanos) {
        return new Outcome(Kind.SNOOZE, job, delayMillis, null, runNanos, false, 0, null);
    }

    /** The failure of a RETRY or DEAD outcome (or of a rescued job's lost lease). */
    public JobError failure() {
        if (error == null) {
            throw new IllegalStateException(kind + " outcome of job " + job.id() + " has no error");
        }
        return error;
    }

    /** Why a DEAD outcome ended. */
    public EndReason deadReason() {
        if (endReason == null) {
            throw new IllegalStateException(kind + " outcome of job " + job.id() + " has no end reason");
        }
        return endReason;
    }

    /** The job goes back at once, its attempt not counted. */
    public static Outcome release(Job job) {
        return new Outcome(Kind.RELEASE, job, 0, null, 0, false, 0, null);
    }
}
