package dev.stagger.internal;

import dev.stagger.Clock;
import dev.stagger.RetryScope;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * One run of a queue consumer's handler inside a {@link RetryScope}, so the consumer learns
 * whether a Stagger retry inside the handler already decided on its failure (the one-layer rule),
 * and how long it ran. One home for the RabbitMQ and Kafka consumers.
 *
 * @param failure what the handler threw, null when it returned
 * @param nanos how long it ran, on the consumer's clock
 * @param scope the closed scope the handler ran in
 */
public record HandlerCall(@Nullable Throwable failure, long nanos, RetryScope scope) {
    /** What a handler does. */
    @FunctionalInterface
    public interface Body {
        void run() throws Exception;
    }

    /** Runs {@code body}, catching whatever it throws. */
    public static HandlerCall run(Clock clock, Body body) {
        long started = clock.nanoTime();
        Throwable failure = null;
        RetryScope scope = RetryScope.open(null); // hears the Stagger retries the handler runs
        try {
            body.run();
        } catch (Throwable t) {
            failure = t;
        } finally {
            scope.close();
        }
        return new HandlerCall(failure, Math.max(0, clock.nanoTime() - started), scope);
    }

    /** The retry inside the handler that decided on the failure, if one did. */
    public Optional<RetryScope.Outcome> decidedOn() {
        return failure == null ? Optional.empty() : scope.decidedOn(failure);
    }
}
