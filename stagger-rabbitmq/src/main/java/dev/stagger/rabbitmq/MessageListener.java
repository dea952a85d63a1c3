package dev.stagger.rabbitmq;

/**
 * Hears what a {@link RabbitConsumer} does with each delivery, so metrics and logs can be added
 * without this module depending on a metrics or logging library (stagger-observability has both).
 *
 * <p>Called on the handler thread once the outcome is safe on the broker and before the original
 * delivery is acknowledged: for RETRIED and DEAD_LETTERED after the broker confirmed the
 * republished copy; for SUCCEEDED and RETURNED just before the acknowledgement or the return. It
 * must therefore be quick and thread-safe; an exception it throws is ignored.
 */
@FunctionalInterface
public interface MessageListener {
    void onMessage(MessageEvent event);
}
