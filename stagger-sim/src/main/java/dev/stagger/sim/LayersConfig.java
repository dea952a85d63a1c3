package dev.stagger.sim;

import dev.stagger.internal.Checks;
import java.time.Duration;
import java.util.List;

/**
 * The {@code layers} scenario: users send requests at {@code rate} per second for
 * {@code duration} to a chain of {@code tiers} services (the edge first); the last tier calls the
 * bottom (a database, say), which answers after {@code serviceTime}. The bottom fails every
 * request from {@code outageStart} for {@code outageLength}, and any other request with
 * probability {@code failureRate}. Each tier retries its downstream with {@code attempts} attempts
 * and Stagger's default backoff; a user waits at most {@code userTimeout} for an answer. See the
 * module README for the model.
 *
 * <p>Immutable; the {@code with...} methods return a copy. The compact constructor validates
 * every field.
 *
 * @param seed the seed of every random draw
 * @param setups what to compare, in output order; not empty
 * @param tiers services between the user and the bottom, the edge included; 1 to {@value #MAX_TIERS}
 * @param attempts attempts each tier makes on its downstream; 1 to {@value #MAX_ATTEMPTS}, and
 *     {@code attempts^tiers} at most {@value #MAX_FAN_OUT}
 * @param rate user requests per second, in (0, 1000]
 * @param duration how long users send requests
 * @param outageStart when the bottom starts failing every request
 * @param outageLength how long it does (zero for none)
 * @param failureRate the share of the other requests the bottom fails, in [0, 1]
 * @param userTimeout how long a user waits for an answer; the deadline the guarded set-ups propagate
 * @param serviceTime how long the bottom takes to answer (a success or a failure)
 * @param networkMean mean one-way message delay between two tiers
 * @param networkSd its standard deviation
 */
public record LayersConfig(long seed, List<LayersSetup> setups, int tiers, int attempts, double rate,
                           Duration duration, Duration outageStart, Duration outageLength, double failureRate,
                           Duration userTimeout, Duration serviceTime, Duration networkMean, Duration networkSd) {
    /** The most tiers a run may have. */
    public static final int MAX_TIERS = 6;
    /** The most attempts per tier. */
    public static final int MAX_ATTEMPTS = 10;
    /** The most attempts one request may cause at the bottom without guards ({@code attempts^tiers}). */
    public static final int MAX_FAN_OUT = 1024;

    public LayersConfig {
        setups = Checks.nonEmpty("setups", setups);
        Checks.atLeast("tiers", tiers, 1);
        if (tiers > MAX_TIERS) {
            throw new IllegalArgumentException("tiers must be at most " + MAX_TIERS + ", got " + tiers);
        }
        Checks.atLeast("attempts", attempts, 1);
        if (attempts > MAX_ATTEMPTS) {
            throw new IllegalArgumentException("attempts must be at most " + MAX_ATTEMPTS + ", got " + attempts);
        }
        if (Math.pow(attempts, tiers) > MAX_FAN_OUT) {
            throw new IllegalArgumentException("attempts^tiers must be at most " + MAX_FAN_OUT + ", got " + attempts
                    + "^" + tiers);
        }
        if (!(rate > 0 && rate <= 1000)) {
            throw new IllegalArgumentException("rate must be in (0, 1000], got " + rate);
        }
        Checks.positive("duration", duration);
        Checks.nonNegative("outageStart", outageStart);
        Checks.nonNegative("outageLength", outageLength);
        if (!(failureRate >= 0 && failureRate <= 1)) {
            throw new IllegalArgumentException("failureRate must be in [0, 1], got " + failureRate);
        }
        Checks.positive("userTimeout", userTimeout);
        Checks.positive("serviceTime", serviceTime);
        Checks.positive("networkMean", networkMean);
        Checks.nonNegative("networkSd", networkSd);
    }

    /**
     * 3 tiers of 3 attempts, 20 requests/s for 30 s, the bottom down from 5 s to 25 s and otherwise
     * healthy, users waiting 2 s, the bottom answering in 5 ms, network 10 ± 2 ms, every preset, seed 1.
     */
    public static LayersConfig defaults() {
        return new LayersConfig(1L, LayersSetup.presets(), 3, 3, 20, Duration.ofSeconds(30), Duration.ofSeconds(5),
                Duration.ofSeconds(20), 0, Duration.ofSeconds(2), Duration.ofMillis(5), Duration.ofMillis(10),
                Duration.ofMillis(2));
    }

    public LayersConfig withSeed(long seed) {
        return new LayersConfig(seed, setups, tiers, attempts, rate, duration, outageStart, outageLength, failureRate,
                userTimeout, serviceTime, networkMean, networkSd);
    }

    public LayersConfig withSetups(List<LayersSetup> setups) {
        return new LayersConfig(seed, setups, tiers, attempts, rate, duration, outageStart, outageLength, failureRate,
                userTimeout, serviceTime, networkMean, networkSd);
    }

    /** A chain of {@code tiers} services, each making {@code attempts} attempts. */
    public LayersConfig withChain(int tiers, int attempts) {
        return new LayersConfig(seed, setups, tiers, attempts, rate, duration, outageStart, outageLength, failureRate,
                userTimeout, serviceTime, networkMean, networkSd);
    }

    /** Users send {@code rate} requests per second for {@code duration}. */
    public LayersConfig withTraffic(double rate, Duration duration) {
        return new LayersConfig(seed, setups, tiers, attempts, rate, duration, outageStart, outageLength, failureRate,
                userTimeout, serviceTime, networkMean, networkSd);
    }

    /** The bottom fails everything from {@code start} for {@code length}, and {@code failureRate} of the rest. */
    public LayersConfig withFailures(Duration start, Duration length, double failureRate) {
        return new LayersConfig(seed, setups, tiers, attempts, rate, duration, start, length, failureRate,
                userTimeout, serviceTime, networkMean, networkSd);
    }

    public LayersConfig withUserTimeout(Duration userTimeout) {
        return new LayersConfig(seed, setups, tiers, attempts, rate, duration, outageStart, outageLength, failureRate,
                userTimeout, serviceTime, networkMean, networkSd);
    }

    /** {@code attempts^tiers}: the attempts one failing request makes at the bottom when every tier retries it. */
    public long naiveFanOut() {
        return Math.round(Math.pow(attempts, tiers));
    }
}
