package dev.stagger;

import java.time.Duration;
import org.jspecify.annotations.Nullable;

/**
 * What a {@link Retry} tells its {@link RetryListener}s. Metrics and logs are built from these
 * events only.
 */
public sealed interface RetryEvent permits RetryEvent.AttemptFinished, RetryEvent.RetryScheduled,
        RetryEvent.CallFinished {

    /** The retry's name. */
    String name();

    /**
     * One attempt ended, successfully or not.
     *
     * @param attempt 1 for the first attempt
     * @param duration how long the attempt ran
     * @param result the attempt's result, or null when it threw
     * @param failure what it threw, or null
     * @param decision the classifier's decision on it
     */
    record AttemptFinished(String name, int attempt, int maxAttempts, Duration duration, @Nullable Object result,
                           @Nullable Throwable failure, Decision decision) implements RetryEvent {
        /** True when the attempt did not produce an accepted result. */
        public boolean failed() {
            return decision.kind() != Decision.Kind.ACCEPT;
        }
    }

    /**
     * A retry will happen: the call waits {@code delay} before attempt {@code nextAttempt}.
     *
     * @param result the failed attempt's result (a retried 503 response, say), or null
     * @param cause the failed attempt's exception, or null when a result was retried
     */
    record RetryScheduled(String name, int nextAttempt, int maxAttempts, Duration delay, Decision decision,
                          @Nullable Object result, @Nullable Throwable cause) implements RetryEvent {
    }

    /**
     * The call ended.
     *
     * @param attempts attempts actually made (0 if refused before the first)
     * @param failure the exception the caller receives, or null when a result is returned
     */
    record CallFinished(String name, EndReason reason, int attempts, int maxAttempts, Duration elapsed,
                        @Nullable Object result, @Nullable Throwable failure) implements RetryEvent {
    }
}
