package dev.stagger.internal;

import dev.stagger.Clock;
import dev.stagger.RetryListener;
import dev.stagger.RetryScope;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.BiFunction;
import org.jspecify.annotations.Nullable;

/**
 * One run of a queue consumer's handler inside a {@link RetryScope}, so the consumer learns
 * whether a Stagger retry inside the handler already decided on its failure (the one-layer rule),
 * and how long it ran. One home for the RabbitMQ and Kafka consumers.
 *
 * @param failure what the handler threw, null when it returned
 * @param nanos how long it ran, on the consumer's clock; 0 when it ran without listeners (the
 *     consumers report the time only to them, so without them the clock is not read)
 * @param scope the closed scope the handler ran in
 */
public record HandlerCall(@Nullable Throwable failure, long nanos, RetryScope scope) {
    /** What a handler does. */
    @FunctionalInterface
    public interface Body {
        void run() throws Exception;
    }

    /** Runs {@code body}, catching whatever it throws; timed on {@code clock} unless it is null (nanos 0). */
    private static HandlerCall call(@Nullable Clock clock, Body body) {
        long started = clock == null ? 0 : clock.nanoTime();
        Throwable failure = null;
        RetryScope scope = RetryScope.open(null); // hears the Stagger retries the handler runs
        try {
            body.run();
        } catch (Throwable t) {
            failure = t;
        } finally {
            scope.close();
        }
        return new HandlerCall(failure, clock == null ? 0 : Math.max(0, clock.nanoTime() - started), scope);
    }

    /**
     * Runs {@code body}, catching whatever it throws, with the scope each listener opens for
     * {@code message} (an observation made current on the handler's thread, say) around it,
     * closed last opened first. A listener that throws, or returns null, opens nothing: listeners
     * never change what becomes of the message. Without listeners the handler is not timed
     * ({@link #nanos()} is 0): nobody would read the time.
     */
    public static <L, M> HandlerCall run(Clock clock, L[] listeners, M message,
                                         BiFunction<? super L, ? super M, RetryListener.@Nullable Scope> opener, Body body) {
        if (listeners.length == 0) {
            return call(null, body);
        }
        return call(clock, () -> {
            Object opened = open(listeners, message, opener);
            try {
                body.run();
            } finally {
                close(opened);
            }
        });
    }

    /** Asks every listener; returns null, one scope, or a list of them (most listeners open none). */
    private static <L, M> @Nullable Object open(L[] listeners, M message,
                                                BiFunction<? super L, ? super M, RetryListener.@Nullable Scope> opener) {
        Object opened = null;
        for (L l : listeners) {
            RetryListener.Scope s;
            try {
                s = opener.apply(l, message);
            } catch (RuntimeException ignored) {
                continue; // listeners must not change what becomes of the message
            }
            if (s == null) {
                continue;
            }
            if (opened == null) {
                opened = s;
            } else {
                @SuppressWarnings("unchecked") // only this method makes the list
                List<RetryListener.Scope> all = opened instanceof List<?> ? (List<RetryListener.Scope>) opened
                        : new ArrayList<>(List.of((RetryListener.Scope) opened));
                all.add(s);
                opened = all;
            }
        }
        return opened;
    }

    /** Closes what {@link #open} returned, the last opened first. */
    private static void close(@Nullable Object opened) {
        if (opened instanceof RetryListener.Scope s) {
            closeQuietly(s);
        } else if (opened instanceof List<?> all) {
            for (int i = all.size() - 1; i >= 0; i--) {
                closeQuietly((RetryListener.Scope) all.get(i));
            }
        }
    }

    private static void closeQuietly(RetryListener.Scope scope) {
        try {
            scope.close();
        } catch (RuntimeException ignored) {
            // listeners must not change what becomes of the message
        }
    }

    /** The retry inside the handler that decided on the failure, if one did. */
    public Optional<RetryScope.Outcome> decidedOn() {
        return failure == null ? Optional.empty() : scope.decidedOn(failure);
    }
}
