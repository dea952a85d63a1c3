package dev.stagger.sim;

import dev.stagger.internal.Checks;
import java.time.Duration;
import java.util.List;

/**
 * The {@code contention} scenario, after Marc Brooker's "Exponential Backoff and Jitter" (AWS,
 * 2015): {@code clients} clients each need one successful write to a single register guarded by
 * optimistic concurrency. A client reads the version, then writes with it; the write succeeds only
 * if nobody else wrote in between, otherwise the client backs off and reads again. Every message
 * (read request, read response, write request, write response) takes a network delay drawn from
 * {@code |Normal(networkMean, networkSd)|}. All clients start at time zero.
 *
 * <p>Immutable; the {@code with...} methods return a copy. The compact constructor validates
 * every field.
 *
 * @param clients how many clients compete; at least 1
 * @param runs repetitions averaged per strategy; at least 1
 * @param seed the seed of every random draw; equal seeds give equal results
 * @param strategies the strategies to compare, in output order; not empty
 * @param base the first backoff delay (5 ms in the AWS post)
 * @param cap the ceiling on every delay (2 s in the AWS post)
 * @param maxAttempts attempts per client before it gives up; {@link Integer#MAX_VALUE} (the
 *     default) never gives up, as in the AWS model
 * @param networkMean mean one-way message delay
 * @param networkSd its standard deviation
 * @param budget share one {@link dev.stagger.RetryBudget} (defaults) among all clients
 * @param circuitBreaker share one {@link dev.stagger.CircuitBreaker} among all clients (see {@link Simulation})
 */
public record ContentionConfig(int clients, int runs, long seed, List<Strategy> strategies, Duration base, Duration cap,
                               int maxAttempts, Duration networkMean, Duration networkSd, boolean budget,
                               boolean circuitBreaker) {

    public ContentionConfig {
        Checks.atLeast("clients", clients, 1);
        Checks.atLeast("runs", runs, 1);
        strategies = Checks.nonEmpty("strategies", strategies);
        Checks.positive("base", base);
        Checks.positive("cap", cap);
        if (cap.compareTo(base) < 0) {
            throw new IllegalArgumentException("cap must be >= base, got cap=" + cap + " base=" + base);
        }
        Checks.atLeast("maxAttempts", maxAttempts, 1);
        Checks.positive("networkMean", networkMean);
        Checks.nonNegative("networkSd", networkSd);
    }

    /** The AWS post's setup: 100 clients, base 5 ms, cap 2 s, network 10 ± 2 ms, every strategy, 10 runs. */
    public static ContentionConfig defaults() {
        return new ContentionConfig(100, 10, 1L, List.of(Strategy.values()), Duration.ofMillis(5),
                Duration.ofSeconds(2), Integer.MAX_VALUE, Duration.ofMillis(10), Duration.ofMillis(2), false, false);
    }

    public ContentionConfig withClients(int clients) {
        return new ContentionConfig(clients, runs, seed, strategies, base, cap, maxAttempts, networkMean, networkSd,
                budget, circuitBreaker);
    }

    public ContentionConfig withRuns(int runs) {
        return new ContentionConfig(clients, runs, seed, strategies, base, cap, maxAttempts, networkMean, networkSd,
                budget, circuitBreaker);
    }

    public ContentionConfig withSeed(long seed) {
        return new ContentionConfig(clients, runs, seed, strategies, base, cap, maxAttempts, networkMean, networkSd,
                budget, circuitBreaker);
    }

    public ContentionConfig withStrategies(List<Strategy> strategies) {
        return new ContentionConfig(clients, runs, seed, strategies, base, cap, maxAttempts, networkMean, networkSd,
                budget, circuitBreaker);
    }

    public ContentionConfig withMaxAttempts(int maxAttempts) {
        return new ContentionConfig(clients, runs, seed, strategies, base, cap, maxAttempts, networkMean, networkSd,
                budget, circuitBreaker);
    }

    public ContentionConfig withBudget(boolean budget) {
        return new ContentionConfig(clients, runs, seed, strategies, base, cap, maxAttempts, networkMean, networkSd,
                budget, circuitBreaker);
    }

    public ContentionConfig withCircuitBreaker(boolean circuitBreaker) {
        return new ContentionConfig(clients, runs, seed, strategies, base, cap, maxAttempts, networkMean, networkSd,
                budget, circuitBreaker);
    }
}
