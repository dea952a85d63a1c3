package dev.stagger;

import dev.stagger.internal.Checks;
import java.time.Duration;

/** AWS decorrelated jitter; see {@link Backoff#decorrelated(Duration, Duration)}. */
final class DecorrelatedBackoff implements Backoff {
    private final long baseNanos;
    private final long capNanos;

    DecorrelatedBackoff(Duration base, Duration cap) {
        this.baseNanos = Checks.nanos(Checks.positive("base", base));
        this.capNanos = Checks.nanos(Checks.positive("cap", cap));
        if (capNanos < baseNanos) {
            throw new IllegalArgumentException("cap must be >= base, got cap=" + cap + " base=" + base);
        }
    }

    @Override
    public Duration maxDelay() {
        return Duration.ofNanos(capNanos);
    }

    @Override
    public Schedule start(RandomSource random) {
        return resume(random, 0);
    }

    /** The state is the previous delay in nanoseconds; 0 (no delay yet) starts from {@code base}. */
    @Override
    public Schedule resume(RandomSource random, long state) {
        long from = state <= 0 ? baseNanos : Math.min(Math.max(state, baseNanos), capNanos);
        return new Schedule() {
            private long previous = from;

            @Override
            public long nextDelayNanos(int retry) {
                double upper = 3.0 * previous;
                double sleep = baseNanos + (upper - baseNanos) * random.nextDouble();
                previous = Checks.clampNanos(sleep, capNanos);
                return previous;
            }

            @Override
            public long state() {
                return previous;
            }
        };
    }

    @Override
    public String toString() {
        return "decorrelated(base=" + Duration.ofNanos(baseNanos) + ", cap=" + maxDelay() + ")";
    }
}
