package dev.stagger.internal;

import dev.stagger.Backoff;
import dev.stagger.RandomSource;
import java.time.Duration;

/** Polly's decorrelated jitter v2. See {@link Backoff#pollyDecorrelatedJitterV2}. */
public final class PollyDecorrelatedJitterV2 implements Backoff {
    private static final double P_FACTOR = 4.0;
    private static final double RP_SCALING = 1 / 1.4;

    private final long medianNanos;
    private final long maxNanos;

    public PollyDecorrelatedJitterV2(Duration median, Duration maxDelay) {
        this.medianNanos = Checks.nanos(Checks.positive("median", median));
        this.maxNanos = Checks.nanos(Checks.positive("maxDelay", maxDelay));
    }

    @Override
    public Duration maxDelay() {
        return Duration.ofNanos(maxNanos);
    }

    @Override
    public Schedule start(RandomSource random) {
        return resume(random, 0);
    }

    /** The state is {@code prev}'s bits ({@link Double#doubleToRawLongBits}); 0 is the 0.0 it starts from. */
    @Override
    public Schedule resume(RandomSource random, long state) {
        double from = Double.longBitsToDouble(state);
        double start = from >= 0 ? from : 0; // also NaN: a damaged value starts over
        return new Schedule() {
            private double prev = start;

            @Override
            public long state() {
                return Double.doubleToRawLongBits(prev);
            }

            @Override
            public long nextDelayNanos(int retry) {
                int n = Math.max(0, retry - 1);
                double t = n + random.nextDouble();
                double next = Math.pow(2, t) * Math.tanh(Math.sqrt(P_FACTOR * t));
                if (Double.isInfinite(next)) {
                    // Past 2^1024 the formula has no meaning left: hold at the ceiling.
                    prev = next;
                    return maxNanos;
                }
                double delay = (next - prev) * RP_SCALING * medianNanos;
                prev = next;
                return Checks.clampNanos(delay, maxNanos);
            }
        };
    }

    @Override
    public String toString() {
        return "pollyDecorrelatedJitterV2(median=" + Duration.ofNanos(medianNanos) + ", maxDelay=" + maxDelay() + ")";
    }
}
