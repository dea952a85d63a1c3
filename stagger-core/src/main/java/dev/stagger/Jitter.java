package dev.stagger;

import dev.stagger.internal.Checks;

/**
 * Randomises a computed delay so that many clients that failed together do not retry together.
 *
 * <p>{@code d} below is the delay before jitter, in nanoseconds, and {@code r} a draw from the
 * {@link RandomSource} in [0, 1). Results are never negative; the owning {@link Backoff} clamps
 * them to its {@code maxDelay}, so jitter can never push a wait past the ceiling.
 */
@FunctionalInterface
public interface Jitter {

    /** @return the jittered delay in nanoseconds, for a non-negative {@code delayNanos} */
    double apply(double delayNanos, RandomSource random);

    /** No randomness: the formula as written. */
    static Jitter none() {
        return StandardJitter.NONE;
    }

    /** {@code U[0, d]} — AWS "full jitter"; the least total work under contention. */
    static Jitter full() {
        return StandardJitter.FULL;
    }

    /** {@code d/2 + U[0, d/2]} — AWS "equal jitter": never waits less than half. */
    static Jitter equal() {
        return StandardJitter.EQUAL;
    }

    /**
     * {@code d + U[0, f·d]} — only ever adds, so a wait is never shorter than the formula's;
     * Polly's jitter for its constant and linear backoffs is {@code proportional(0.5)}.
     */
    static Jitter proportional(double factor) {
        double f = Checks.fraction("jitter factor", factor);
        return new Jitter() {
            @Override
            public double apply(double d, RandomSource random) {
                return d + f * d * random.nextDouble();
            }

            @Override
            public String toString() {
                return "proportional(" + f + ")";
            }
        };
    }

    /** {@code U[d(1-f), d(1+f)]} — symmetric spread, as in gRPC (0.2) and cenkalti/backoff (0.5). */
    static Jitter spread(double factor) {
        double f = Checks.fraction("jitter factor", factor);
        return new Jitter() {
            @Override
            public double apply(double d, RandomSource random) {
                return d * (1 - f) + 2 * f * d * random.nextDouble();
            }

            @Override
            public String toString() {
                return "spread(" + f + ")";
            }
        };
    }
}
