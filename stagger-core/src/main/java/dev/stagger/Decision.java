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
 *       long (Retry-After); the wait is the hint plus the backoff's own (jittered) delay on top, so
 *       clients told the same hint do not all come back at the same instant. The hint is not
 *       capped by the backoff's {@code maxDelay}, but a hint past the deadline ends the call.
 *   <li>{@link #stop()} — a permanent failure: never retried. A failure is rethrown; a result
 *       (an HTTP 400, say) is returned, and the call ends with reason NOT_RETRYABLE.
 * </ul>
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

    /** Retry, waiting at least {@code minimum} (a server hint); jitter is still added on top. */
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

    public long minDelayNanos() {
        return minDelayNanos;
    }

    @Override
    public String toString() {
        return minDelayNanos > 0 ? "retryAfter(" + minDelay() + ")" : kind.name().toLowerCase(java.util.Locale.ROOT);
    }
}
