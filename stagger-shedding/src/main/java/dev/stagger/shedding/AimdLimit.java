package dev.stagger.shedding;

import dev.stagger.internal.Checks;
import java.time.Duration;

/**
 * Additive increase, multiplicative decrease, on a latency threshold: the congestion control of
 * TCP Reno applied to requests in flight. Immutable; made by {@link #builder(Duration)}.
 *
 * <ul>
 *   <li>A request that took longer than the {@linkplain Builder latency threshold} multiplies the
 *       limit by the {@linkplain Builder#backoffRatio(double) backoff ratio} (0.9). Only once
 *       per round trip: a slow request that started before the last decrease does not decrease
 *       it again, so a burst of slow requests that were all in flight together counts once.</li>
 *   <li>Any other request adds {@code 1 / limit}, so the limit grows by about one per round trip
 *       of a full window of requests — but only while at least half of the limit was in use when
 *       the request started, so a quiet server does not grow a limit it never tests.</li>
 *   <li>The limit stays within [{@linkplain Builder#minLimit(int) minLimit},
 *       {@linkplain Builder#maxLimit(int) maxLimit}].</li>
 * </ul>
 *
 * <p>Under overload the limit settles where latency reaches the threshold; so set the threshold to
 * the latency you are willing to serve (say twice the normal latency), not to a client timeout.
 * If you cannot name one, use {@link GradientLimit}, which finds it.
 */
public final class AimdLimit implements Limit {
    private final Duration latencyThreshold;
    private final int initialLimit;
    private final int minLimit;
    private final int maxLimit;
    private final double backoffRatio;

    private AimdLimit(Builder b) {
        this.latencyThreshold = b.latencyThreshold;
        this.initialLimit = b.initialLimit;
        this.minLimit = b.minLimit;
        this.maxLimit = b.maxLimit;
        this.backoffRatio = b.backoffRatio;
    }

    /**
     * @param latencyThreshold a request slower than this decreases the limit
     */
    public static Builder builder(Duration latencyThreshold) {
        return new Builder(Checks.positive("latencyThreshold", latencyThreshold));
    }

    public Builder toBuilder() {
        return new Builder(latencyThreshold).initialLimit(initialLimit).minLimit(minLimit).maxLimit(maxLimit)
                .backoffRatio(backoffRatio);
    }

    public Duration latencyThreshold() {
        return latencyThreshold;
    }

    public int initialLimit() {
        return initialLimit;
    }

    public int minLimit() {
        return minLimit;
    }

    public int maxLimit() {
        return maxLimit;
    }

    public double backoffRatio() {
        return backoffRatio;
    }

    @Override
    public String toString() {
        return "AimdLimit{latencyThreshold=" + latencyThreshold + ", initialLimit=" + initialLimit + ", minLimit="
                + minLimit + ", maxLimit=" + maxLimit + ", backoffRatio=" + backoffRatio + "}";
    }

    /** Configures an {@link AimdLimit}; {@link #build()} validates and snapshots. Not thread-safe. */
    public static final class Builder {
        private final Duration latencyThreshold;
        private int initialLimit = 20;
        private int minLimit = 1;
        private int maxLimit = 1000;
        private double backoffRatio = 0.9;

        private Builder(Duration latencyThreshold) {
            this.latencyThreshold = latencyThreshold;
        }

        /** The limit before the first sample. Default 20. */
        public Builder initialLimit(int initialLimit) {
            this.initialLimit = Checks.atLeast("initialLimit", initialLimit, 1);
            return this;
        }

        /** The limit never goes below this. Default 1. */
        public Builder minLimit(int minLimit) {
            this.minLimit = Checks.atLeast("minLimit", minLimit, 1);
            return this;
        }

        /** The limit never goes above this. Default 1000. */
        public Builder maxLimit(int maxLimit) {
            this.maxLimit = Checks.atLeast("maxLimit", maxLimit, 1);
            return this;
        }

        /** What a slow request multiplies the limit by, in (0, 1). Default 0.9. */
        public Builder backoffRatio(double backoffRatio) {
            this.backoffRatio = Checks.inside("backoffRatio", backoffRatio, 0.0, 1.0);
            return this;
        }

        /**
         * @throws IllegalArgumentException when the limits are out of order
         *     ({@code minLimit <= initialLimit <= maxLimit})
         */
        public AimdLimit build() {
            Checks.notBelow("maxLimit", maxLimit, "minLimit", minLimit);
            if (initialLimit < minLimit || initialLimit > maxLimit) {
                throw new IllegalArgumentException("initialLimit must be in [minLimit " + minLimit + ", maxLimit "
                        + maxLimit + "], got " + initialLimit);
            }
            return new AimdLimit(this);
        }
    }
}
