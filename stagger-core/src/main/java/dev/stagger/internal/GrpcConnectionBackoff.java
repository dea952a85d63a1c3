package dev.stagger.internal;

import dev.stagger.Backoff;
import dev.stagger.RandomSource;
import java.time.Duration;

/** gRPC connection backoff; jitter after the cap. See {@link Backoff#grpcConnection()}. */
public final class GrpcConnectionBackoff implements Backoff {
    public static final GrpcConnectionBackoff DEFAULT =
            new GrpcConnectionBackoff(Duration.ofSeconds(1), 1.6, 0.2, Duration.ofSeconds(120));

    private final long initialNanos;
    private final double multiplier;
    private final double jitter;
    private final long maxNanos;
    private final long ceilingNanos;

    public GrpcConnectionBackoff(Duration initial, double multiplier, double jitter, Duration max) {
        this.initialNanos = Checks.nanos(Checks.positive("initial", initial));
        this.multiplier = Checks.atLeast("multiplier", multiplier, 1.0);
        this.jitter = Checks.fraction("jitter", jitter);
        this.maxNanos = Checks.nanos(Checks.positive("max", max));
        this.ceilingNanos = Checks.clampNanos(maxNanos * (1 + jitter), Long.MAX_VALUE);
    }

    @Override
    public Duration maxDelay() {
        return Duration.ofNanos(ceilingNanos);
    }

    @Override
    public Schedule start(RandomSource random) {
        return retry -> {
            double d = Math.min(maxNanos, initialNanos * Math.pow(multiplier, Math.max(0, retry - 1)));
            double u = random.nextDouble() * 2 - 1; // U(-1, 1)
            return Checks.clampNanos(d * (1 + jitter * u), ceilingNanos);
        };
    }

    @Override
    public String toString() {
        return "grpcConnection(initial=" + Duration.ofNanos(initialNanos) + ", multiplier=" + multiplier
                + ", jitter=" + jitter + ", max=" + Duration.ofNanos(maxNanos) + ")";
    }
}
