package dev.stagger.rabbitmq;

/**
 * Hears what a {@link RabbitConsumer} does with each delivery, so metrics and logs can be added
 * without this module depending on a metrics or logging library (stagger-observability has both).
 *
 * <p>Called once the outcome is safe on the broker and before the original delivery is
 * acknowledged: for SUCCEEDED, on the handler thread just before the acknowledgement; for RETRIED
 * and DEAD_LETTERED, when the broker's confirm of the republished copy arrives, on the
 * connection's own thread (the handler thread does not wait for it); for RETURNED, when the
 * message is handed back or its wait before going back begins. It must therefore be quick,
 * never block and be thread-safe; an exception it throws is ignored.
 */
@FunctionalInterface
public interface MessageListener {
    void onMessage(MessageEvent event);
}
