package dev.stagger;

import dev.stagger.internal.Checks;
import java.time.Duration;

/**
 * The same wait before every retry, optionally jittered and then clamped to {@code maxDelay}.
 * Immutable: each setter returns a new instance. Unlike {@link ExponentialBackoff} it has no
 * multiplier, so it cannot be turned into a growing backoff by accident.
 */
public final class FixedBackoff implements Backoff {
    /** The formula as an exponential backoff that does not grow; every delay comes from it. */
    private final ExponentialBackoff formula;

    FixedBackoff(Duration delay) {
        this(new ExponentialBackoff(Checks.positive("delay", delay)).multiplier(1.0));
    }

    private FixedBackoff(ExponentialBackoff formula) {
        this.formula = formula;
    }

    /** Hard ceiling on every delay, after jitter too (a jitter that only adds cannot pass it). */
    public FixedBackoff maxDelay(Duration maxDelay) {
        return new FixedBackoff(formula.maxDelay(maxDelay));
    }

    public FixedBackoff jitter(Jitter jitter) {
        return new FixedBackoff(formula.jitter(jitter));
    }

    /** The wait before jitter. */
    public Duration delay() {
        return formula.base();
    }

    public Jitter jitter() {
        return formula.jitter();
    }

    @Override
    public Duration maxDelay() {
        return formula.maxDelay();
    }

    @Override
    public Schedule start(RandomSource random) {
        return formula.start(random);
    }

    @Override
    public String toString() {
        return "fixed(delay=" + delay() + ", maxDelay=" + maxDelay() + ", jitter=" + jitter() + ")";
    }
}
