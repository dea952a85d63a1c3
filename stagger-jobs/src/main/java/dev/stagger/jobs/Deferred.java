package dev.stagger.jobs;

import dev.stagger.EndReason;
import java.time.Instant;

/**
 * Work handed to a durable queue because the downstream could not take it now: what the caller
 * can show ("we will retry this for you") and the job to look up later. Made by
 * {@link QueueFallback}.
 *
 * @param queue the queue the job waits in
 * @param key the job key; fallbacks for the same key enqueue one job between them
 * @param jobId the job's id (the existing job's when the key was already enqueued)
 * @param reason why the call ended instead of completing
 * @param deferredAt when it was handed over, on the queue's clock
 */
public record Deferred(String queue, String key, long jobId, EndReason reason, Instant deferredAt) {
}
