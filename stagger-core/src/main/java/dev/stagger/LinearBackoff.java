package dev.stagger;

import dev.stagger.internal.Checks;
import java.time.Duration;

/**
 * {@code initial + step·(k-1)} for retry {@code k}, capped at {@code maxDelay}, then jitter, then
 * clamped to {@code maxDelay} again. Immutable.
 */
public final class LinearBackoff implements Backoff {
    private final long initialNanos;
    private final long stepNanos;
    private final long maxNanos;
    private final Jitter jitter;
    /** The stateless schedule without jitter, shared by every call (no allocation per call). */
    private final Schedule plain = this::rawDelayNanos;

    LinearBackoff(Duration initial, Duration step) {
        this(Checks.nanos(Checks.positive("initial", initial)), Checks.nanos(Checks.nonNegative("step", step)),
                Long.MAX_VALUE, Jitter.none());
    }

    private LinearBackoff(long initialNanos, long stepNanos, long maxNanos, Jitter jitter) {
        this.initialNanos = initialNanos;
        this.stepNanos = stepNanos;
        this.maxNanos = maxNanos;
        this.jitter = jitter;
    }

    public LinearBackoff maxDelay(Duration maxDelay) {
        return new LinearBackoff(initialNanos, stepNanos, Checks.nanos(Checks.positive("maxDelay", maxDelay)), jitter);
    }

    public LinearBackoff jitter(Jitter jitter) {
        return new LinearBackoff(initialNanos, stepNanos, maxNanos, Checks.notNull("jitter", jitter));
    }

    @Override
    public Duration maxDelay() {
        return Duration.ofNanos(maxNanos);
    }

    long rawDelayNanos(int retry) {
        return Checks.clampNanos(initialNanos + (double) stepNanos * (Math.max(1, retry) - 1), maxNanos);
    }

    @Override
    public Schedule start(RandomSource random) {
        if (jitter == Jitter.none()) {
            return plain;
        }
        return retry -> Checks.clampNanos(jitter.apply(rawDelayNanos(retry), random), maxNanos);
    }

    @Override
    public String toString() {
        return "linear(initial=" + Duration.ofNanos(initialNanos) + ", step=" + Duration.ofNanos(stepNanos)
                + ", maxDelay=" + maxDelay() + ", jitter=" + jitter + ")";
    }
}
