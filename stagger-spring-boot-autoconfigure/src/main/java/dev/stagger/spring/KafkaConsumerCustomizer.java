package dev.stagger.spring;

import dev.stagger.kafka.KafkaRetryConsumer;

/**
 * Adjusts a Stagger Kafka consumer of {@code stagger.kafka.consumers} before it is built, for what
 * the properties do not say (a listener, {@code maxPending}, {@code shutdownTimeout}, a clock).
 * Every customizer bean is applied to every consumer, after the properties, in the beans' order.
 */
@FunctionalInterface
public interface KafkaConsumerCustomizer {
    /**
     * @param name the consumer's name (its key under {@code stagger.kafka.consumers})
     * @param builder the consumer's builder, the properties applied
     */
    void customize(String name, KafkaRetryConsumer.Builder builder);
}
