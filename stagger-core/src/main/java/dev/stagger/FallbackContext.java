package dev.stagger;

import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * What a {@link Fallback} knows about the call it answers: why it ended, how many attempts were
 * made, the last failure or result, and, when known, when the downstream may be tried again.
 * Made once per fallback run, on the thread that ended the call; immutable.
 */
public final class FallbackContext {
    private final String name;
    private final EndReason reason;
    private final int attempts;
    private final @Nullable Throwable lastFailure;
    private final @Nullable Object lastResult;
    private final @Nullable Throwable failure;
    private final @Nullable Duration retryIn;
    private final Clock clock;

    FallbackContext(String name, EndReason reason, int attempts, @Nullable Throwable lastFailure,
                    @Nullable Object lastResult, @Nullable Throwable failure, @Nullable Duration retryIn, Clock clock) {
        this.name = name;
        this.reason = reason;
        this.attempts = attempts;
        this.lastFailure = lastFailure;
        this.lastResult = lastResult;
        this.failure = failure;
        this.retryIn = retryIn;
        this.clock = clock;
    }

    /** The retry's name. */
    public String name() {
        return name;
    }

    /** Why the call ended: never SUCCESS, RECOVERED or CANCELLED. */
    public EndReason reason() {
        return reason;
    }

    /** Attempts actually made (0 when the breaker refused the first). */
    public int attempts() {
        return attempts;
    }

    /** What the last attempt threw; empty when it returned a result or no attempt was made. */
    public Optional<Throwable> lastFailure() {
        return Optional.ofNullable(lastFailure);
    }

    /**
     * The last attempt's result when a result (an HTTP 503 response, say) was being retried;
     * empty when it threw or no attempt was made.
     */
    public Optional<Object> lastResult() {
        return Optional.ofNullable(lastResult);
    }

    /**
     * The exception the caller would receive without the fallback (the last failure, or a
     * {@link RetryRefusedException} for CIRCUIT_OPEN and BUDGET); empty when the call would
     * return {@link #lastResult()}.
     */
    public Optional<Throwable> failure() {
        return Optional.ofNullable(failure);
    }

    /**
     * When the downstream may usefully be tried again, when known: the time until the circuit
     * breaker lets its next probe through (the call was refused, or the breaker opened on it).
     * A module that knows more (the HTTP client's {@code Retry-After}) may say more; see
     * {@link Fallback#message(String)}.
     *
     * <p>Empty for a call the {@link AdaptiveThrottle} refused ({@link EndReason#THROTTLED}):
     * nothing is known. Its refusals are random with a probability that falls as the backend
     * accepts requests again, not at a time that could be told in advance (a quiet client's window
     * empties within {@link AdaptiveThrottle#window()}, a busy one's may not).
     */
    public Optional<Duration> retryIn() {
        return Optional.ofNullable(retryIn);
    }

    /** {@link #retryIn()} as a point in time on the retry's clock. */
    public Optional<Instant> retryAt() {
        return retryIn == null ? Optional.empty()
                : Optional.of(now().plus(retryIn));
    }

    /** The current time on the retry's clock (a {@code VirtualClock}'s in tests). */
    public Instant now() {
        return Instant.ofEpochMilli(clock.currentTimeMillis());
    }

    /** The retry's clock, for fallbacks that measure age or staleness. */
    public Clock clock() {
        return clock;
    }

    @Override
    public String toString() {
        return "FallbackContext{" + name + ", " + reason + ", attempts=" + attempts + "}";
    }
}
