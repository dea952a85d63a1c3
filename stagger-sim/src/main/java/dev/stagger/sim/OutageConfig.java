package dev.stagger.sim;

import dev.stagger.internal.Checks;
import java.time.Duration;
import java.util.List;

/**
 * The {@code outage} scenario: {@code clients} clients each start calls at a steady rate
 * ({@code callsPerSecondPerClient}, evenly spaced, each client at a random phase) for
 * {@code trafficDuration}. The server handles {@code capacityFactor} times the offered rate,
 * first come first served; a request that would queue longer than {@code maxQueueDelay} is shed
 * with a 503. From {@code outageStart} for {@code outageLength} the server is down and answers
 * every request with a 503. Each call retries under a policy of {@code maxAttempts} attempts with
 * the strategy's backoff from {@code base} up to {@code cap}. Message delays are
 * {@code |Normal(networkMean, networkSd)|}.
 *
 * <p>Immutable; the {@code with...} methods return a copy. The compact constructor validates
 * every field.
 *
 * @param clients how many clients send; at least 1
 * @param runs repetitions averaged per strategy; at least 1
 * @param seed the seed of every random draw
 * @param strategies the strategies to compare, in output order; not empty
 * @param callsPerSecondPerClient each client's steady rate of new calls
 * @param capacityFactor server capacity as a multiple of the offered rate (clients × rate)
 * @param outageStart when the server goes down, from the start of traffic
 * @param outageLength how long it stays down
 * @param trafficDuration how long clients keep starting new calls
 * @param maxQueueDelay the longest a request may wait in the server's queue before it is shed
 * @param base the first backoff delay
 * @param cap the ceiling on every delay
 * @param maxAttempts attempts per call, at least 1 (the SRE book suggests at most 3; default 5)
 * @param networkMean mean one-way message delay
 * @param networkSd its standard deviation
 * @param budget share one {@link dev.stagger.RetryBudget} (defaults) among all clients
 * @param circuitBreaker share one {@link dev.stagger.CircuitBreaker} among all clients (see {@link Simulation})
 */
public record OutageConfig(int clients, int runs, long seed, List<Strategy> strategies, double callsPerSecondPerClient,
                           double capacityFactor, Duration outageStart, Duration outageLength, Duration trafficDuration,
                           Duration maxQueueDelay, Duration base, Duration cap, int maxAttempts, Duration networkMean,
                           Duration networkSd, boolean budget, boolean circuitBreaker) {

    public OutageConfig {
        Checks.atLeast("clients", clients, 1);
        Checks.atLeast("runs", runs, 1);
        strategies = Checks.nonEmpty("strategies", strategies);
        Checks.positive("callsPerSecondPerClient", callsPerSecondPerClient);
        Checks.positive("capacityFactor", capacityFactor);
        Checks.nonNegative("outageStart", outageStart);
        Checks.nonNegative("outageLength", outageLength);
        Checks.positive("trafficDuration", trafficDuration);
        Checks.positive("maxQueueDelay", maxQueueDelay);
        Checks.positive("base", base);
        Checks.positive("cap", cap);
        if (cap.compareTo(base) < 0) {
            throw new IllegalArgumentException("cap must be >= base, got cap=" + cap + " base=" + base);
        }
        Checks.atLeast("maxAttempts", maxAttempts, 1);
        Checks.positive("networkMean", networkMean);
        Checks.nonNegative("networkSd", networkSd);
    }

    /**
     * 100 clients at 10 calls/s each (1000 calls/s offered), capacity 1.5x, down from 1 s to 4 s,
     * traffic for 8 s, 1 s queue limit, 5 attempts with waits from 100 ms up to 2 s, network
     * 10 ± 2 ms, every strategy, 10 runs.
     */
    public static OutageConfig defaults() {
        return new OutageConfig(100, 10, 1L, List.of(Strategy.values()), 10.0, 1.5, Duration.ofSeconds(1),
                Duration.ofSeconds(3), Duration.ofSeconds(8), Duration.ofSeconds(1), Duration.ofMillis(100),
                Duration.ofSeconds(2), 5, Duration.ofMillis(10), Duration.ofMillis(2), false, false);
    }

    /** Calls started per second by all clients together. */
    public double offeredRate() {
        return clients * callsPerSecondPerClient;
    }

    public OutageConfig withClients(int clients) {
        return new OutageConfig(clients, runs, seed, strategies, callsPerSecondPerClient, capacityFactor, outageStart,
                outageLength, trafficDuration, maxQueueDelay, base, cap, maxAttempts, networkMean, networkSd, budget,
                circuitBreaker);
    }

    public OutageConfig withRuns(int runs) {
        return new OutageConfig(clients, runs, seed, strategies, callsPerSecondPerClient, capacityFactor, outageStart,
                outageLength, trafficDuration, maxQueueDelay, base, cap, maxAttempts, networkMean, networkSd, budget,
                circuitBreaker);
    }

    public OutageConfig withSeed(long seed) {
        return new OutageConfig(clients, runs, seed, strategies, callsPerSecondPerClient, capacityFactor, outageStart,
                outageLength, trafficDuration, maxQueueDelay, base, cap, maxAttempts, networkMean, networkSd, budget,
                circuitBreaker);
    }

    public OutageConfig withStrategies(List<Strategy> strategies) {
        return new OutageConfig(clients, runs, seed, strategies, callsPerSecondPerClient, capacityFactor, outageStart,
                outageLength, trafficDuration, maxQueueDelay, base, cap, maxAttempts, networkMean, networkSd, budget,
                circuitBreaker);
    }

    /** The server down from {@code start} for {@code length}; a length of zero means no outage. */
    public OutageConfig withOutage(Duration start, Duration length) {
        return new OutageConfig(clients, runs, seed, strategies, callsPerSecondPerClient, capacityFactor, start,
                length, trafficDuration, maxQueueDelay, base, cap, maxAttempts, networkMean, networkSd, budget,
                circuitBreaker);
    }

    public OutageConfig withMaxAttempts(int maxAttempts) {
        return new OutageConfig(clients, runs, seed, strategies, callsPerSecondPerClient, capacityFactor, outageStart,
                outageLength, trafficDuration, maxQueueDelay, base, cap, maxAttempts, networkMean, networkSd, budget,
                circuitBreaker);
    }

    public OutageConfig withBudget(boolean budget) {
        return new OutageConfig(clients, runs, seed, strategies, callsPerSecondPerClient, capacityFactor, outageStart,
                outageLength, trafficDuration, maxQueueDelay, base, cap, maxAttempts, networkMean, networkSd, budget,
                circuitBreaker);
    }

    public OutageConfig withCircuitBreaker(boolean circuitBreaker) {
        return new OutageConfig(clients, runs, seed, strategies, callsPerSecondPerClient, capacityFactor, outageStart,
                outageLength, trafficDuration, maxQueueDelay, base, cap, maxAttempts, networkMean, networkSd, budget,
                circuitBreaker);
    }
}
