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
        return new Schedule() {
            private long previous = baseNanos;

            @Override
            public long nextDelayNanos(int retry) {
                double upper = 3.0 * previous;
                double sleep = baseNanos + (upper - baseNanos) * random.nextDouble();
                previous = Checks.clampNanos(sleep, capNanos);
                return previous;
            }
        };
    }

    @Override
    public String toString() {
        return "decorrelated(base=" + Duration.ofNanos(baseNanos) + ", cap=" + maxDelay() + ")";
    }
}
