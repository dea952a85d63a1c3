package dev.stagger.jobs;

/**
 * Runs one job of a type. Returning normally completes the job; throwing hands the failure to the
 * retry policy's classifier (retry later, or dead). Delivery is at least once: a handler can run
 * again for the same job after a crash or a lost lease, so make its effects idempotent, or complete
 * the job in your own transaction with {@link JobContext#completeWithin}.
 */
@FunctionalInterface
public interface JobHandler {
    void handle(JobContext context) throws Exception;
}
