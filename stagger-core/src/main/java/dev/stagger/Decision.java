package dev.stagger;

import dev.stagger.internal.Checks;
import java.time.Duration;

/**
 * What a {@link Classifier} says about one attempt's outcome.
 *
 * <ul>
 *   <li>{@link #accept()} — the outcome is a success; return it.
 *   <li>{@link #retry()} — a transient failure; wait per the backoff and try again.
 *   <li>{@link #retryAfter(Duration)} — as {@code retry()}, but the server asked for at least this
 *       long (Retry-After). See "The hint rule" below.
 *   <li>{@link #stop()} — a permanent failure: never retried. A failure is rethrown; a result
 *       (an HTTP 400, say) is returned, and the call ends with reason NOT_RETRYABLE.
 * </ul>
 *
 * <h2>The hint rule</h2>
 * The wait after {@code retryAfter(hint)} is {@code hint + d}, where {@code d} is the delay the
 * policy's backoff gives for that retry, jitter included: the hint is a minimum, and the backoff's
 * own delay goes on top, so clients told the same hint do not all come back at the same instant.
 * With a backoff of 100 ms and full jitter, a draw of 0.5 and a hint of 2 s, the wait is 2.05 s.
 * The sum is not capped by the backoff's {@code maxDelay}; a wait that would end past the policy's
 * deadline ends the call at once (reason DEADLINE). The same rule holds wherever
 * {@link RetryEngine} decides: {@link Retry#call}, {@link Retry#callAsync}, the job workers, and
 * anything else built on the engine.
 */
public final class Decision {
    /** The three kinds of decision. */
    public enum Kind { ACCEPT, RETRY, STOP }

    private static final Decision ACCEPT = new Decision(Kind.ACCEPT, 0);
    private static final Decision RETRY = new Decision(Kind.RETRY, 0);
    private static final Decision STOP = new Decision(Kind.STOP, 0);

    private final Kind kind;
    private final long minDelayNanos;

    private Decision(Kind kind, long minDelayNanos) {
        this.kind = kind;
        this.minDelayNanos = minDelayNanos;
    }

    public static Decision accept() {
        return ACCEPT;
    }

    public static Decision retry() {
        return RETRY;
    }

    public static Decision stop() {
        return STOP;
    }

    /** Retry, waiting at least {@code minimum} (a server hint); the backoff's delay is added on top. */
    public static Decision retryAfter(Duration minimum) {
        Checks.nonNegative("retryAfter", minimum);
        return new Decision(Kind.RETRY, Checks.nanos(minimum));
    }

    public Kind kind() {
        return kind;
    }

    public boolean isRetry() {
        return kind == Kind.RETRY;
    }

    /** The server's minimum wait, zero when there is none. */
    public Duration minDelay() {
        return Duration.ofNanos(minDelayNanos);
    }

    long minDelayNanos() {
        return minDelayNanos;
    }

    @Override
    public String toString() {
        return minDelayNanos > 0 ? "retryAfter(" + minDelay() + ")" : kind.name().toLowerCase(java.util.Locale.ROOT);
    }
}
