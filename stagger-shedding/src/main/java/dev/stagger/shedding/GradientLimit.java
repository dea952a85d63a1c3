package dev.stagger.shedding;

import dev.stagger.internal.Checks;
import java.time.Duration;

/**
 * A latency-gradient limit, after Envoy's adaptive concurrency gradient controller: the limit
 * follows the ratio of the latency the server has when idle to the latency it has now. Immutable;
 * made by {@link #builder()}. The defaults are Envoy's where Envoy has the setting.
 *
 * <ol>
 *   <li><b>minRTT.</b> The limit is pinned until {@linkplain Builder#minRttSamples(int)
 *       minRttSamples} (50) requests that started after the pin have completed; their
 *       {@linkplain Builder#minRttPercentile(double) median} is the minRTT, the latency of the
 *       server with nothing queued. At start the pin is {@linkplain Builder#minLimit(int) minLimit}
 *       (3), the floor. The minRTT is measured again every {@linkplain Builder#minRttInterval(Duration)
 *       minRttInterval} (60 s) plus up to {@linkplain Builder#minRttJitter(double) minRttJitter}
 *       (15 %) of it at random (so a fleet does not measure at once), pinned to what the server was
 *       just serving: the most requests in flight in the last window, never below the floor. Where
 *       the measurement comes out above the minRTT plus its buffer, requests queued at that limit,
 *       and it measures again at half, down to the floor. A measurement above the floor may lower
 *       the minRTT but not raise it (the little queueing within the tolerance would otherwise
 *       ratchet it up at every measurement); one at the floor may raise it. When the limit has sat
 *       at its minimum with latency above the tolerance for 5 windows in a row, the minRTT is
 *       presumed stale (the service got slower for good) and is measured at the floor. Afterwards
 *       the limit returns to its value before the measurement.</li>
 *   <li><b>Gradient.</b> Every {@linkplain Builder#sampleWindow(Duration) sampleWindow}
 *       (100 ms) or round trip, whichever is longer, the mean latency of the window's requests
 *       (sampleRTT) gives
 *       {@code gradient = clamp(minRTT * (1 + minRttBuffer) / sampleRTT, 0.5, 2.0)}, with
 *       {@linkplain Builder#minRttBuffer(double) minRttBuffer} 25 % of tolerance for normal
 *       variance.</li>
 *   <li><b>Limit.</b> {@code limit = gradient * limit + sqrt(gradient * limit)}, within
 *       [minLimit, {@linkplain Builder#maxLimit(int) maxLimit}]; the square-root headroom keeps
 *       probing for more concurrency while latency sits near the minRTT. The limit does not grow
 *       in a window in which fewer than half of it were ever in use.</li>
 *   <li><b>Long requests.</b> A request in flight for longer than
 *       {@linkplain Builder#longRequestFactor(double) longRequestFactor} (10) times
 *       {@code max(minRTT, sampleWindow)}, 1 s by default and before the first minRTT, is a long
 *       poll, an upload or a download rather than the server's usual work: it stops holding a slot
 *       of the limit, for up to {@code limit} such requests at once (so in flight stays below
 *       twice the limit), and its latency is no sample for a window. A few long requests cannot
 *       fill the limit and starve the short ones, at start or while the minRTT is measured.</li>
 * </ol>
 *
 * <p>It departs from Envoy in two ways. In the model of a saturated server in the tests (a fixed
 * number of permits, a service time that varies a little, a queue), leaving out either lets the
 * limit swing well past twice the permits, and admitted latency with it:
 * <ul>
 *   <li>a window's requests are those admitted after it opened, and it closes once its time is
 *       up and as many of them as the limit have completed: a window is at least one full round
 *       of the limit (as a TCP congestion window is), so the limit never reacts to latencies that
 *       the limit before it caused, nor to the one or two requests that happen to complete first
 *       when requests take longer than the window;</li>
 *   <li>the window's latencies are averaged, not taken at a percentile: on a server with a steady
 *       service time a request either finds a free slot or waits a whole service time, and the
 *       median of such two-valued latencies flips from one value to the other.</li>
 * </ul>
 * And where Envoy pins every measurement to its minimum concurrency and counts a request until it
 * ends, here a measurement starts at what the server was just serving and long requests give their
 * slot back (items 1 and 4): with Envoy's rules, three long polls made a nearly idle server shed
 * almost every short request, and eight slow uploads shed everything from the first re-measure on.
 *
 * <p>On a server that can work on {@code N} requests at once (and queues the rest), the limit
 * settles where the gradient's shrinking meets the headroom: {@code limit = 1.25 N + sqrt(1.25 N)},
 * so admitted requests take about {@code 1.25 + sqrt(1.25 / N)} times the idle latency on average
 * (1.53x for N = 16, 1.36x for N = 100). Keep {@code minLimit} at or below {@code N}, or the minRTT
 * itself includes queueing.
 */
public final class GradientLimit implements Limit {
    private final int minLimit;
    private final int maxLimit;
    private final Duration sampleWindow;
    private final double minRttPercentile;
    private final Duration minRttInterval;
    private final double minRttJitter;
    private final int minRttSamples;
    private final double minRttBuffer;
    private final double longRequestFactor;

    private GradientLimit(Builder b) {
        this.minLimit = b.minLimit;
        this.maxLimit = b.maxLimit;
        this.sampleWindow = b.sampleWindow;
        this.minRttPercentile = b.minRttPercentile;
        this.minRttInterval = b.minRttInterval;
        this.minRttJitter = b.minRttJitter;
        this.minRttSamples = b.minRttSamples;
        this.minRttBuffer = b.minRttBuffer;
        this.longRequestFactor = b.longRequestFactor;
    }

    public static Builder builder() {
        return new Builder();
    }

    public Builder toBuilder() {
        return new Builder().minLimit(minLimit).maxLimit(maxLimit).sampleWindow(sampleWindow)
                .minRttPercentile(minRttPercentile).minRttInterval(minRttInterval).minRttJitter(minRttJitter)
                .minRttSamples(minRttSamples).minRttBuffer(minRttBuffer).longRequestFactor(longRequestFactor);
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

    public double minRttPercentile() {
        return minRttPercentile;
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

    public double longRequestFactor() {
        return longRequestFactor;
    }

    @Override
    public String toString() {
        return "GradientLimit{minLimit=" + minLimit + ", maxLimit=" + maxLimit + ", sampleWindow=" + sampleWindow
                + ", minRttPercentile=" + minRttPercentile + ", minRttInterval=" + minRttInterval
                + ", minRttJitter=" + minRttJitter + ", minRttSamples=" + minRttSamples
                + ", minRttBuffer=" + minRttBuffer + ", longRequestFactor=" + longRequestFactor + "}";
    }

    /** Configures a {@link GradientLimit}; {@link #build()} validates and snapshots. Not thread-safe. */
    public static final class Builder {
        private int minLimit = 3;
        private int maxLimit = 1000;
        private Duration sampleWindow = Duration.ofMillis(100);
        private double minRttPercentile = 0.5;
        private Duration minRttInterval = Duration.ofSeconds(60);
        private double minRttJitter = 0.15;
        private int minRttSamples = 50;
        private double minRttBuffer = 0.25;
        private double longRequestFactor = 10;

        private Builder() {
        }

        /**
         * The lowest limit, and the floor of the limit while the minRTT is measured (the limit then
         * is what the server was just serving well, but not less). Default 3.
         */
        public Builder minLimit(int minLimit) {
            this.minLimit = Checks.atLeast("minLimit", minLimit, 1);
            return this;
        }

        /** The highest limit. Default 1000. */
        public Builder maxLimit(int maxLimit) {
            this.maxLimit = Checks.atLeast("maxLimit", maxLimit, 1);
            return this;
        }

        /**
         * How often the limit is recomputed from the latencies of the requests admitted since; a
         * window also lasts until as many requests as the limit have completed. Default 100 ms.
         */
        public Builder sampleWindow(Duration sampleWindow) {
            this.sampleWindow = Checks.positive("sampleWindow", sampleWindow);
            return this;
        }

        /**
         * Which percentile of the minRTT measurement's latencies is the minRTT, in (0, 1].
         * Default 0.5: the median, which a few stragglers (a cold cache, a pause) do not move.
         */
        public Builder minRttPercentile(double minRttPercentile) {
            if (!(minRttPercentile > 0.0 && minRttPercentile <= 1.0)) {
                throw new IllegalArgumentException("minRttPercentile must be in (0, 1], got " + minRttPercentile);
            }
            this.minRttPercentile = minRttPercentile;
            return this;
        }

        /** How often the minRTT is measured again. Default 60 s. */
        public Builder minRttInterval(Duration minRttInterval) {
            this.minRttInterval = Checks.positive("minRttInterval", minRttInterval);
            return this;
        }

        /** Up to this fraction of the interval is added at random to each wait, in [0, 1]. Default 0.15. */
        public Builder minRttJitter(double minRttJitter) {
            this.minRttJitter = Checks.between("minRttJitter", minRttJitter, 0.0, 1.0);
            return this;
        }

        /** Completed requests that make one minRTT measurement, 1 to 10,000. Default 50. */
        public Builder minRttSamples(int minRttSamples) {
            Checks.atLeast("minRttSamples", minRttSamples, 1);
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
            this.minRttBuffer = Checks.between("minRttBuffer", minRttBuffer, 0.0, 10.0);
            return this;
        }

        /**
         * When a request counts as long (a long poll, an upload, a download), in minRTTs, and in
         * sample windows at least: {@code longRequestFactor * max(minRTT, sampleWindow)}, 1 s by
         * default. A request that has run that long stops holding a slot of the limit (up to
         * {@code limit} such requests at once, so in flight stays below twice the limit) and its
         * latency is no sample. From 2 to 1,000,000. Default 10.
         */
        public Builder longRequestFactor(double longRequestFactor) {
            this.longRequestFactor = Checks.between("longRequestFactor", longRequestFactor, 2.0, 1_000_000.0);
            return this;
        }

        /** @throws IllegalArgumentException when {@code maxLimit < minLimit} */
        public GradientLimit build() {
            Checks.notBelow("maxLimit", maxLimit, "minLimit", minLimit);
            return new GradientLimit(this);
        }
    }
}
