package dev.stagger.kafka;

import dev.stagger.RetryListener;
import org.jspecify.annotations.Nullable;

/**
 * Hears what a {@link KafkaRetryConsumer} does with each record, so metrics and logs can be added
 * without this module depending on a metrics or logging library. Called once the outcome is safe
 * on the broker (for RETRIED and DEAD_LETTERED, after the copy was acknowledged) and before the
 * offset is committed: on a handler thread, or, for RETRIED, on the producer's thread (the handler
 * thread does not wait for a retry's copy). It must be quick, never block and be
 * thread-safe; an exception it throws is ignored.
 */
@FunctionalInterface
public interface RecordListener {
    void onRecord(RecordEvent event);

    /**
     * Called on the handler's thread just before the handler runs with {@code message}; the
     * returned scope (null: none) is closed on that thread as the handler returns or throws,
     * before {@link #onRecord} hears the outcome. What a tracer needs to make the handler's own
     * spans children of the record's attempt. It must be quick; an exception it throws is ignored.
     *
     * @param message the record as the handler sees it
     * @return a scope to close after the handler, or null
     */
    default RetryListener.@Nullable Scope onHandling(KafkaMessage message) {
        return null;
    }
}
