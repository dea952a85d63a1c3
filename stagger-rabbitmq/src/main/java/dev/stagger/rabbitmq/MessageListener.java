package dev.stagger.rabbitmq;

import dev.stagger.RetryListener;
import org.jspecify.annotations.Nullable;

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

    /**
     * Called on the handler's thread as the handler is invoked for {@code message}; what it returns,
     * when not null, is closed on that thread as soon as the handler returns or throws (before the
     * outcome is settled and {@link #onMessage} told). A tracer makes the attempt's span the current
     * one here, so the spans the handler starts are its children. A {@link RuntimeException} from
     * it, or from the scope's {@code close}, is ignored.
     */
    default RetryListener.@Nullable Scope onHandling(Message message) {
        return null;
    }
}
