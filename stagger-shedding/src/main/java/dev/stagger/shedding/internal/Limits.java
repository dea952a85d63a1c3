package dev.stagger.shedding.internal;

import dev.stagger.RandomSource;
import dev.stagger.internal.AimdAlgorithm;
import dev.stagger.internal.Checks;
import dev.stagger.internal.LimitAlgorithm;
import dev.stagger.shedding.AimdLimit;
import dev.stagger.shedding.FixedLimit;
import dev.stagger.shedding.GradientLimit;
import dev.stagger.shedding.Limit;

/** The running state of a {@link Limit}: core's algorithms (shared with its bulkhead), and the gradient. */
public final class Limits {
    private Limits() {
    }

    /** The running state of {@code limit}, starting at {@code nowNanos}. */
    public static LimitAlgorithm algorithm(Limit limit, RandomSource random, long nowNanos) {
        if (limit instanceof FixedLimit) {
            return LimitAlgorithm.fixed(((FixedLimit) limit).limit());
        }
        if (limit instanceof AimdLimit) {
            AimdLimit aimd = (AimdLimit) limit;
            return new AimdAlgorithm(Checks.nanos(aimd.latencyThreshold()), aimd.initialLimit(), aimd.minLimit(),
                    aimd.maxLimit(), aimd.backoffRatio());
        }
        return new GradientAlgorithm((GradientLimit) limit, random, nowNanos);
    }
}
