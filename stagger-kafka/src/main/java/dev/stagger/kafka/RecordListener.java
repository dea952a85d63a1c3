package dev.stagger.kafka;

/**
 * Hears what a {@link KafkaRetryConsumer} does with each record, so metrics and logs can be added
 * without this module depending on a metrics or logging library. Called on a handler thread once
 * the outcome is safe on the broker (for RETRIED and DEAD_LETTERED, after the copy was
 * acknowledged) and before the offset is committed. It must be quick, never block and be
 * thread-safe; an exception it throws is ignored.
 */
@FunctionalInterface
public interface RecordListener {
    void onRecord(RecordEvent event);
}
