package dev.stagger.shedding;

import dev.stagger.shedding.internal.Check;
import java.time.Duration;

/**
 * A latency-gradient limit, after Envoy's adaptive concurrency gradient controller: the limit
 * follows the ratio of the latency the server has when idle to the latency it has now. Immutable;
 * made by {@link #builder()}; the defaults are Envoy's.
 *
 * <ol>
 *   <li><b>minRTT.</b> The limit is pinned to {@linkplain Builder#minLimit(int) minLimit} (3)
 *       until {@linkplain Builder#minRttSamples(int) minRttSamples} (50) requests that started
 *       after the pin have completed; their {@linkplain Builder#samplePercentile(double)
 *       percentile} is the minRTT, the latency of the server with almost nothing in flight. This
 *       runs at start, again every {@linkplain Builder#minRttInterval(Duration) minRttInterval}
 *       (60 s) plus up to {@linkplain Builder#minRttJitter(double) minRttJitter} (15 %) of it at
 *       random (so a fleet does not measure at once), and when the limit has sat at its minimum
 *       for 5 windows in a row (the minRTT is then presumed stale). Afterwards the limit returns
 *       to its value before the measurement.</li>
 *   <li><b>Gradient.</b> Every {@linkplain Builder#sampleWindow(Duration) sampleWindow}
 *       (100 ms), the percentile of the latencies of the window's requests (sampleRTT) gives
 *       {@code gradient = clamp(minRTT * (1 + minRttBuffer) / sampleRTT, 0.5, 2.0)}, with
 *       {@linkplain Builder#minRttBuffer(double) minRttBuffer} 25 % of tolerance for normal
 *       variance. A window's requests are those admitted after it opened, and it closes when the
 *       first of them completes after its end: so a window lasts at least one round trip, and the
 *       limit never reacts to latencies caused by the limit before it. (Envoy samples every
 *       request that completes in the window; on a server whose latency is close to the window,
 *       that makes the limit swing well past twice the capacity and back.)</li>
 *   <li><b>Limit.</b> {@code limit = gradient * limit + sqrt(gradient * limit)}, within
 *       [minLimit, {@linkplain Builder#maxLimit(int) maxLimit}]. The square-root headroom keeps
 *       probing for more concurrency while latency sits near the minRTT. The limit does not grow
 *       in a window in which fewer than half of it were ever in use.</li>
 * </ol>
 *
 * <p>On a server that can work on {@code N} requests at once (and queues the rest), the limit
 * settles where the gradient's shrinking meets the headroom: {@code limit = 1.25 N + sqrt(1.25 N)},
 * so admitted requests take about {@code 1.25 + sqrt(1.25 / N)} times the idle latency (1.53x for
 * N = 16, 1.36x for N = 100). Keep {@code minLimit} at or below {@code N}, or the minRTT itself
 * includes queueing.
 */
public final class GradientLimit implements Limit {
    private final int minLimit;
    private final int maxLimit;
    private final Duration sampleWindow;
    private final double samplePercentile;
    private final Duration minRttInterval;
    private final double minRttJitter;
    private final int minRttSamples;
    private final double minRttBuffer;

    private GradientLimit(Builder b) {
        this.minLimit = b.minLimit;
        this.maxLimit = b.maxLimit;
        this.sampleWindow = b.sampleWindow;
        this.samplePercentile = b.samplePercentile;
        this.minRttInterval = b.minRttInterval;
        this.minRttJitter = b.minRttJitter;
        this.minRttSamples = b.minRttSamples;
        this.minRttBuffer = b.minRttBuffer;
    }

    public static Builder builder() {
        return new Builder();
    }

    public Builder toBuilder() {
        return new Builder().minLimit(minLimit).maxLimit(maxLimit).sampleWindow(sampleWindow)
                .samplePercentile(samplePercentile).minRttInterval(minRttInterval).minRttJitter(minRttJitter)
                .minRttSamples(minRttSamples).minRttBuffer(minRttBuffer);
    }

    public int minLimit() {
        return minLimit;
    }

    public int maxLimit() {
        return maxLimit;
    }

    public Duration sampleWindow() {
        return sampleWindow;
    }

    public double samplePercentile() {
        return samplePercentile;
    }

    public Duration minRttInterval() {
        return minRttInterval;
    }

    public double minRttJitter() {
        return minRttJitter;
    }

    public int minRttSamples() {
        return minRttSamples;
    }

    public double minRttBuffer() {
        return minRttBuffer;
    }

    @Override
    public String toString() {
        return "GradientLimit{minLimit=" + minLimit + ", maxLimit=" + maxLimit + ", sampleWindow=" + sampleWindow
                + ", samplePercentile=" + samplePercentile + ", minRttInterval=" + minRttInterval
                + ", minRttJitter=" + minRttJitter + ", minRttSamples=" + minRttSamples
                + ", minRttBuffer=" + minRttBuffer + "}";
    }

    /** Configures a {@link GradientLimit}; {@link #build()} validates and snapshots. Not thread-safe. */
    public static final class Builder {
        private int minLimit = 3;
        private int maxLimit = 1000;
        private Duration sampleWindow = Duration.ofMillis(100);
        private double samplePercentile = 0.5;
        private Duration minRttInterval = Duration.ofSeconds(60);
        private double minRttJitter = 0.15;
        private int minRttSamples = 50;
        private double minRttBuffer = 0.25;

        private Builder() {
        }

        /** The lowest limit, and the limit while the minRTT is measured. Default 3. */
        public Builder minLimit(int minLimit) {
            this.minLimit = Check.atLeast("minLimit", minLimit, 1);
            return this;
        }

        /** The highest limit. Default 1000. */
        public Builder maxLimit(int maxLimit) {
            this.maxLimit = Check.atLeast("maxLimit", maxLimit, 1);
            return this;
        }

        /** How often the limit is recomputed from the latencies completed since. Default 100 ms. */
        public Builder sampleWindow(Duration sampleWindow) {
            this.sampleWindow = Check.positive("sampleWindow", sampleWindow);
            return this;
        }

        /**
         * Which percentile of a window's latencies stands for it (and for the minRTT samples), in
         * (0, 1]. Default 0.5: the median, which a few stragglers do not move.
         */
        public Builder samplePercentile(double samplePercentile) {
            if (!(samplePercentile > 0.0 && samplePercentile <= 1.0)) {
                throw new IllegalArgumentException("samplePercentile must be in (0, 1], got " + samplePercentile);
            }
            this.samplePercentile = samplePercentile;
            return this;
        }

        /** How often the minRTT is measured again. Default 60 s. */
        public Builder minRttInterval(Duration minRttInterval) {
            this.minRttInterval = Check.positive("minRttInterval", minRttInterval);
            return this;
        }

        /** Up to this fraction of the interval is added at random to each wait, in [0, 1]. Default 0.15. */
        public Builder minRttJitter(double minRttJitter) {
            this.minRttJitter = Check.between("minRttJitter", minRttJitter, 0.0, 1.0);
            return this;
        }

        /** Completed requests that make one minRTT measurement, 1 to 10,000. Default 50. */
        public Builder minRttSamples(int minRttSamples) {
            Check.atLeast("minRttSamples", minRttSamples, 1);
            if (minRttSamples > 10_000) {
                throw new IllegalArgumentException("minRttSamples must be at most 10000, got " + minRttSamples);
            }
            this.minRttSamples = minRttSamples;
            return this;
        }

        /**
         * How far above the minRTT sampled latency may go before the limit shrinks, as a fraction
         * of the minRTT, in [0, 10]. Default 0.25.
         */
        public Builder minRttBuffer(double minRttBuffer) {
            this.minRttBuffer = Check.between("minRttBuffer", minRttBuffer, 0.0, 10.0);
            return this;
        }

        /** @throws IllegalArgumentException when {@code maxLimit < minLimit} */
        public GradientLimit build() {
            Check.notBelow("maxLimit", maxLimit, "minLimit", minLimit);
            return new GradientLimit(this);
        }
    }
}
