package dev.stagger.kafka;

/**
 * Processes one record. Returning normally settles it (its offset is committed); throwing hands
 * the failure to the consumer's {@link dev.stagger.RetryPolicy}: retried later through a delay
 * topic, or dead-lettered. Delivery is at least once: a record can arrive again after a crash or
 * a rebalance, so an effect that must happen once is recorded in an {@code Inbox} under
 * {@link KafkaMessage#id()} in the handler's own transaction. Called on the consumer's handler
 * threads, one record of a partition at a time, several partitions at once.
 */
@FunctionalInterface
public interface KafkaHandler {
    void handle(KafkaMessage message) throws Exception;
}
