/**
 * A Kafka consumer ({@link dev.stagger.kafka.KafkaRetryConsumer}) with non-blocking retries through tiered delay
 * topics and a dead-letter topic.
 */
@NullMarked
package dev.stagger.kafka;

import org.jspecify.annotations.NullMarked;
