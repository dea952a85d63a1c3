package dev.stagger.internal;

import dev.stagger.Backoff;
import dev.stagger.RandomSource;
import java.time.Duration;

/** Kubernetes wait.Backoff's Step(). See {@link Backoff#kubernetes}. */
public final class KubernetesBackoff implements Backoff {
    private final long durationNanos;
    private final double factor;
    private final double jitter;
    private final int steps;
    private final long capNanos;

    public KubernetesBackoff(Duration duration, double factor, double jitter, int steps, Duration cap) {
        this.durationNanos = Checks.nanos(Checks.positive("duration", duration));
        if (!(factor >= 0) || Double.isInfinite(factor)) {
            throw new IllegalArgumentException("factor must be a finite number >= 0, got " + factor);
        }
        this.factor = factor;
        if (!(jitter >= 0) || Double.isInfinite(jitter)) {
            throw new IllegalArgumentException("jitter must be a finite number >= 0, got " + jitter);
        }
        this.jitter = jitter;
        this.steps = Checks.atLeast("steps", steps, 0);
        this.capNanos = Checks.nanos(Checks.nonNegative("cap", cap));
    }

    @Override
    public Duration maxDelay() {
        long limit = capNanos > 0 ? capNanos : Long.MAX_VALUE;
        return Duration.ofNanos(Checks.clampNanos(limit * (1 + jitter), Long.MAX_VALUE));
    }

    @Override
    public Schedule start(RandomSource random) {
        long ceiling = maxDelay().toNanos();
        return new Schedule() {
            private double d = durationNanos;
            private int stepsLeft = steps;

            @Override
            public long nextDelayNanos(int retry) {
                double current = d;
                if (stepsLeft >= 1) {
                    stepsLeft--;
                    if (factor != 0) {
                        d = Math.min(d * factor, Long.MAX_VALUE);
                        if (capNanos > 0 && d > capNanos) {
                            d = capNanos;
                            stepsLeft = 0;
                        }
                    }
                }
                double sleep = jitter > 0 ? current + random.nextDouble() * jitter * current : current;
                return Checks.clampNanos(sleep, ceiling);
            }
        };
    }

    @Override
    public String toString() {
        return "kubernetes(duration=" + Duration.ofNanos(durationNanos) + ", factor=" + factor + ", jitter="
                + jitter + ", steps=" + steps + ", cap=" + Duration.ofNanos(capNanos) + ")";
    }
}
