package dev.stagger.shedding.internal;

import dev.stagger.RandomSource;
import dev.stagger.shedding.AimdLimit;
import dev.stagger.shedding.FixedLimit;
import dev.stagger.shedding.GradientLimit;
import dev.stagger.shedding.Limit;

/**
 * The running state of a {@link Limit}: takes latency samples of completed requests and says how
 * many requests may be in flight. Implementations are thread-safe; {@link #limit()} is a volatile
 * read, cheap enough for every request.
 */
public interface LimitAlgorithm {

    /** The number of requests that may be in flight now, at least 1. */
    int limit();

    /**
     * Records one completed request.
     *
     * @param startNanos when it was admitted ({@link dev.stagger.Clock#nanoTime()})
     * @param endNanos when it completed, on the same clock
     * @param inFlight requests in flight when it was admitted, itself included
     * @return the limit after this sample
     */
    int onSample(long startNanos, long endNanos, int inFlight);

    /**
     * How long a request may run before it counts as long: it then stops holding a slot of the
     * limit (see {@link ConcurrencyLimiter}). {@link Long#MAX_VALUE}, the default, never: a fixed
     * limit or {@code AimdLimit} counts every request until it ends.
     */
    default long longRequestNanos() {
        return Long.MAX_VALUE;
    }

    /** The running state of {@code limit}, starting at {@code nowNanos}. */
    static LimitAlgorithm of(Limit limit, RandomSource random, long nowNanos) {
        if (limit instanceof FixedLimit) {
            int fixed = ((FixedLimit) limit).limit();
            return new LimitAlgorithm() {
                @Override
                public int limit() {
                    return fixed;
                }

                @Override
                public int onSample(long startNanos, long endNanos, int inFlight) {
                    return fixed;
                }
            };
        }
        if (limit instanceof AimdLimit) {
            return new AimdAlgorithm((AimdLimit) limit);
        }
        return new GradientAlgorithm((GradientLimit) limit, random, nowNanos);
    }
}
