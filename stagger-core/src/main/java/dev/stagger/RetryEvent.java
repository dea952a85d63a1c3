package dev.stagger;

import java.time.Duration;
import org.jspecify.annotations.Nullable;

/**
 * What a {@link Retry} tells its {@link RetryListener}s. Metrics and logs are built from these
 * events only.
 */
public sealed interface RetryEvent permits RetryEvent.AttemptFinished, RetryEvent.RetryScheduled,
        RetryEvent.CallFinished, RetryEvent.Deferred, RetryEvent.HedgeSent, RetryEvent.HedgeWon,
        RetryEvent.AttemptCancelled {

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
     * This retry did not retry a failure because a Stagger retry running inside it had already
     * decided on it ({@link Nesting#DEFER}): it ran out of attempts, or judged the failure not
     * retryable. Reported once per such failure, before the call ends with
     * {@link EndReason#NOT_RETRYABLE}.
     *
     * @param name this (the enclosing) retry's name
     * @param attempt this retry's attempt that failed
     * @param inner the inner retry's name
     * @param innerAttempts the attempts the inner retry made
     * @param innerReason why the inner retry ended
     * @param failure what this retry's attempt threw
     */
    record Deferred(String name, int attempt, String inner, int innerAttempts, EndReason innerReason,
                    Throwable failure) implements RetryEvent {
    }

    /**
     * A hedged call sent a hedge: attempt {@code attempt} started while others were still running
     * ({@link HedgePolicy}). The hedge has passed hedging's own guards (overload, credit), the
     * breaker, the throttle and the budget.
     *
     * @param attempt the hedge's attempt number
     * @param delay the hedge delay it was sent after (since the attempt before it started)
     */
    record HedgeSent(String name, int attempt, int maxAttempts, Duration delay) implements RetryEvent {
    }

    /**
     * A hedged call was won by a hedge: the accepted outcome came from attempt {@code attempt}, which
     * was not the first attempt of its round. Reported before the call's end.
     *
     * @param attempt the winning hedge's attempt number
     * @param running attempts still running as it won (they are cancelled next)
     */
    record HedgeWon(String name, int attempt, int running) implements RetryEvent {
    }

    /**
     * An attempt of a hedged call was cancelled while running, because another attempt won, a
     * failure ended the call, or the caller cancelled it. Its outcome is discarded.
     *
     * @param attempt the cancelled attempt's number
     * @param reason why the call ended
     */
    record AttemptCancelled(String name, int attempt, EndReason reason) implements RetryEvent {
    }

    /**
     * The call ended. With a {@link Fallback} that runs for {@code reason}, this is reported after
     * the fallback ran, and {@code result} and {@code failure} are what the caller receives from it.
     *
     * @param reason why retrying stopped (a fallback does not change it)
     * @param attempts attempts actually made (0 if refused before the first)
     * @param failure the exception the caller receives, or null when a result is returned
     * @param fallback the fallback that ran and how it went, or null when none ran
     */
    record CallFinished(String name, EndReason reason, int attempts, int maxAttempts, Duration elapsed,
                        @Nullable Object result, @Nullable Throwable failure, @Nullable FallbackRun fallback)
            implements RetryEvent {

        /** An end no fallback took part in. */
        public CallFinished(String name, EndReason reason, int attempts, int maxAttempts, Duration elapsed,
                            @Nullable Object result, @Nullable Throwable failure) {
            this(name, reason, attempts, maxAttempts, elapsed, result, failure, null);
        }

        /** True when a fallback answered the call (its value, or its message for the user). */
        public boolean servedByFallback() {
            return fallback != null && fallback.outcome() == FallbackRun.Outcome.SERVED;
        }
    }

    /**
     * How a call's {@link Fallback} went (not an event itself: it rides on {@link CallFinished}).
     *
     * @param kind the fallback's {@link Fallback#kind() kind} ("cache", "queue", "message", ...)
     */
    record FallbackRun(String kind, Outcome outcome) {
        /** What the fallback did. */
        public enum Outcome {
            /** It answered the call. */
            SERVED,
            /** It had nothing to answer with (nothing cached): the call ended as without it. */
            DECLINED,
            /** It threw; the caller receives its exception, the call's own failure suppressed on it. */
            FAILED
        }
    }
}
