package dev.stagger.sim;

import dev.stagger.internal.Checks;
import java.time.Duration;
import java.util.List;

/**
 * The {@code tail} scenario: a server of {@code workers} workers whose service time has a long
 * tail — each request takes {@code serviceTime} times a uniform factor in [0.5, 1.5), and
 * {@code tailShare} of them {@code tailFactor} times that — serves a first-come-first-served
 * queue. Calls arrive at random (a Poisson process) for {@code duration}, at {@code load} of the
 * server's capacity, and again at {@code overload} of it; each set-up runs at both. See the module
 * README for the model.
 *
 * <p>Immutable; the {@code with...} methods return a copy. The compact constructor validates
 * every field.
 *
 * @param seed the seed of every random draw
 * @param setups what to compare, in output order; not empty
 * @param workers requests the server serves at once, 1 to 10,000
 * @param serviceTime the mean service time of a request outside the tail
 * @param tailShare the share of requests in the slow tail, in [0, 1)
 * @param tailFactor how many times slower a tail request is, at least 1
 * @param load the offered load of the normal run, as a share of capacity, in (0, 1)
 * @param overload the offered load of the overloaded run, as a share of capacity, in (0, 2]
 * @param duration how long calls arrive
 * @param fixedDelay the fixed hedge delay, and the delay of a percentile hedge during its warm-up
 * @param percentile the percentile of recent latencies a percentile hedge waits, in (0, 100)
 * @param networkMean mean one-way message delay between client and server
 * @param networkSd its standard deviation
 */
public record TailConfig(long seed, List<TailSetup> setups, int workers, Duration serviceTime, double tailShare,
                         double tailFactor, double load, double overload, Duration duration, Duration fixedDelay,
                         double percentile, Duration networkMean, Duration networkSd) {
    public TailConfig {
        setups = Checks.nonEmpty("setups", setups);
        Checks.atLeast("workers", workers, 1);
        Checks.atMost("workers", workers, 10_000);
        Checks.positive("serviceTime", serviceTime);
        if (!(tailShare >= 0 && tailShare < 1)) {
            throw new IllegalArgumentException("tailShare must be in [0, 1), got " + tailShare);
        }
        Checks.atLeast("tailFactor", tailFactor, 1);
        if (!(load > 0 && load < 1)) {
            throw new IllegalArgumentException("load must be in (0, 1), got " + load);
        }
        if (!(overload > 0 && overload <= 2)) {
            throw new IllegalArgumentException("overload must be in (0, 2], got " + overload);
        }
        Checks.positive("duration", duration);
        if (duration.compareTo(Duration.ofMinutes(10)) > 0) {
            throw new IllegalArgumentException("duration must be at most 10 minutes, got " + duration);
        }
        Checks.positive("fixedDelay", fixedDelay);
        Checks.inside("percentile", percentile, 0, 100);
        Checks.positive("networkMean", networkMean);
        Checks.nonNegative("networkSd", networkSd);
    }

    /**
     * 20 workers, 10 ms requests of which 2 % are 20 times slower, 50 % load and 95 % overload for
     * 60 s, a fixed delay of 20 ms, the 95th percentile, network 0.5 ± 0.1 ms, every preset, seed 1.
     */
    public static TailConfig defaults() {
        return new TailConfig(1L, TailSetup.presets(), 20, Duration.ofMillis(10), 0.02, 20, 0.5, 0.95,
                Duration.ofSeconds(60), Duration.ofMillis(20), 95, Duration.ofNanos(500_000), Duration.ofNanos(100_000));
    }

    public TailConfig withSeed(long seed) {
        return new TailConfig(seed, setups, workers, serviceTime, tailShare, tailFactor, load, overload, duration,
                fixedDelay, percentile, networkMean, networkSd);
    }

    public TailConfig withSetups(List<TailSetup> setups) {
        return new TailConfig(seed, setups, workers, serviceTime, tailShare, tailFactor, load, overload, duration,
                fixedDelay, percentile, networkMean, networkSd);
    }

    /** {@code share} of the requests are {@code factor} times slower. */
    public TailConfig withTail(double share, double factor) {
        return new TailConfig(seed, setups, workers, serviceTime, share, factor, load, overload, duration,
                fixedDelay, percentile, networkMean, networkSd);
    }

    /** The offered load of the normal and of the overloaded run, as shares of capacity. */
    public TailConfig withLoads(double load, double overload) {
        return new TailConfig(seed, setups, workers, serviceTime, tailShare, tailFactor, load, overload, duration,
                fixedDelay, percentile, networkMean, networkSd);
    }

    public TailConfig withDuration(Duration duration) {
        return new TailConfig(seed, setups, workers, serviceTime, tailShare, tailFactor, load, overload, duration,
                fixedDelay, percentile, networkMean, networkSd);
    }

    /** The hedge delays: fixed, and the percentile of recent latencies. */
    public TailConfig withDelays(Duration fixedDelay, double percentile) {
        return new TailConfig(seed, setups, workers, serviceTime, tailShare, tailFactor, load, overload, duration,
                fixedDelay, percentile, networkMean, networkSd);
    }

    /** Requests the server can serve per second: workers over the mean service time, tail included. */
    public double capacity() {
        double meanSeconds = serviceTime.toNanos() / 1e9 * (1 - tailShare + tailShare * tailFactor);
        return workers / meanSeconds;
    }
}
