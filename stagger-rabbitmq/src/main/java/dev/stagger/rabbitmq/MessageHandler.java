package dev.stagger.rabbitmq;

/**
 * Processes one message. Returning normally acknowledges it; throwing hands the failure to the
 * consumer's {@link dev.stagger.RetryPolicy}: retried later, or dead-lettered. Delivery is
 * at least once: a message can arrive again after a crash or a lost acknowledgement, so an
 * effect that must happen once is recorded in an {@code Inbox} in the handler's own transaction.
 * Called on the consumer's handler threads, up to its concurrency at once.
 */
@FunctionalInterface
public interface MessageHandler {
    void handle(Message message) throws Exception;
}
