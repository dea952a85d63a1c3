/**
 * A RabbitMQ consumer ({@link dev.stagger.rabbitmq.RabbitConsumer}) with delayed retries and dead letters.
 */
@NullMarked
package dev.stagger.rabbitmq;

import org.jspecify.annotations.NullMarked;
