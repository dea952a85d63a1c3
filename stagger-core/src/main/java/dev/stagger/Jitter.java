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

    /**
     * The jitter a name gives, as configuration files and command lines write it (the one
     * vocabulary of the Spring properties and the command line): {@code none}, {@code full},
     * {@code equal}, {@code proportional} ({@code proportional(0.3)}), {@code proportional(f)},
     * {@code spread} ({@code spread(0.2)}) and {@code spread(f)}, {@code f} in [0, 1]. Case and
     * spaces around the name and the factor do not matter.
     *
     * @throws IllegalArgumentException naming {@code jitter} and echoing (a short prefix of) the text
     */
    static Jitter parse(String text) {
        return JitterName.parse(text, "").toJitter(null);
    }

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
