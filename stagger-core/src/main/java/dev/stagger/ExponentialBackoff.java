package dev.stagger;

import dev.stagger.internal.Checks;
import java.time.Duration;

/**
 * {@code min(maxDelay, base · multiplier^(k-1))} for retry {@code k}, then jitter, then clamped to
 * {@code maxDelay} again so jitter cannot exceed the ceiling. Immutable: each setter returns a
 * new instance. Without {@link #jitter(Jitter)} it is the formula as written, with no randomness.
 * With base 200 ms and the default multiplier 2 the waits are 200, 400, 800, 1600 ms.
 */
public final class ExponentialBackoff implements Backoff {
    static final ExponentialBackoff NONE = new ExponentialBackoff(0, 1.0, Long.MAX_VALUE, Jitter.none());

    private final long baseNanos;
    private final double multiplier;
    private final long maxNanos;
    private final Jitter jitter;
    /** The stateless schedule without jitter, shared by every call (no allocation per call). */
    private final Schedule plain = this::rawDelayNanos;

    ExponentialBackoff(Duration base) {
        this(Checks.nanos(Checks.positive("base", base)), 2.0, Long.MAX_VALUE, Jitter.none());
    }

    private ExponentialBackoff(long baseNanos, double multiplier, long maxNanos, Jitter jitter) {
        this.baseNanos = baseNanos;
        this.multiplier = multiplier;
        this.maxNanos = maxNanos;
        this.jitter = jitter;
    }

    /** Growth per retry; at least 1 (1 is a fixed delay). */
    public ExponentialBackoff multiplier(double multiplier) {
        return new ExponentialBackoff(baseNanos, Checks.atLeast("multiplier", multiplier, 1.0), maxNanos, jitter);
    }

    /** Hard ceiling on every delay, before and after jitter. */
    public ExponentialBackoff maxDelay(Duration maxDelay) {
        return new ExponentialBackoff(baseNanos, multiplier, Checks.nanos(Checks.positive("maxDelay", maxDelay)), jitter);
    }

    public ExponentialBackoff jitter(Jitter jitter) {
        return new ExponentialBackoff(baseNanos, multiplier, maxNanos, Checks.notNull("jitter", jitter));
    }

    public Duration base() {
        return Duration.ofNanos(baseNanos);
    }

    public double multiplier() {
        return multiplier;
    }

    public Jitter jitter() {
        return jitter;
    }

    @Override
    public Duration maxDelay() {
        return Duration.ofNanos(maxNanos);
    }

    /** The delay for retry {@code k} before jitter, in nanoseconds. */
    long rawDelayNanos(int retry) {
        if (retry <= 1 || multiplier == 1.0) {
            return Math.min(baseNanos, maxNanos);
        }
        // pow may overflow to Infinity; clampNanos maps that (and NaN) to the ceiling.
        return Checks.clampNanos(baseNanos * Math.pow(multiplier, retry - 1), maxNanos);
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
        return "exponential(base=" + base() + ", multiplier=" + multiplier + ", maxDelay=" + maxDelay()
                + ", jitter=" + jitter + ")";
    }
}
