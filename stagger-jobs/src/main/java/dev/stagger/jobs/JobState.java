package dev.stagger.jobs;

/**
 * Where a job is in its life. The transitions:
 *
 * <pre>
 *   enqueue ──► AVAILABLE ──claim──► RUNNING ──success──► SUCCEEDED ──purge──► (gone)
 *                  ▲                   │
 *                  ├── retryable failure (run at now + backoff), snooze, lease expired, shutdown
 *                  │                   │
 *                  └──── re-drive ◄── DEAD ◄── permanent failure, attempts exhausted
 * </pre>
 */
public enum JobState {
    /** Waiting for its run-at time, or due and waiting for a worker. */
    AVAILABLE,
    /** Claimed by a worker that holds a lease on it. */
    RUNNING,
    /** Finished successfully; kept until purged. */
    SUCCEEDED,
    /** Failed permanently or ran out of attempts; kept, with its error history, until re-driven. */
    DEAD
}
