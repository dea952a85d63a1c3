package dev.stagger.sim;

import dev.stagger.internal.Checks;
import java.time.Duration;
import java.util.List;

/**
 * The {@code metastable} scenario: a server of {@code workers} workers, each serving one request in
 * {@code serviceTime}, first come first served from a queue that holds at most {@code queueLimit}
 * waiting requests (a request that finds it full is dropped unanswered, as a full listen backlog
 * drops connections). {@code clients} clients start calls at a steady total rate of
 * {@code baseLoad} times the server's capacity; each attempt times out after
 * {@code attemptTimeout}. From {@code triggerStart} for {@code triggerLength} only
 * {@code triggerCapacity} of the workers serve (the trigger). Traffic runs for {@code duration}.
 * See the module README for the whole model and why it looks like this.
 *
 * <p>Immutable; the {@code with...} methods return a copy. The compact constructor validates
 * every field.
 *
 * @param seed the seed of every random draw
 * @param scenarios what to compare, in output order; not empty
 * @param workers requests the server serves at once; at least 2
 * @param serviceTime how long one request takes a worker
 * @param queueLimit requests that may wait for a worker; at least 0
 * @param clients how many clients start calls, evenly spaced, each at a random phase; at least 1
 * @param baseLoad the calls started per second as a fraction of the full capacity, in (0, 10]
 * @param triggerStart when the capacity drops
 * @param triggerLength how long it stays down
 * @param triggerCapacity the fraction of the workers left during the trigger, in (0, 1]
 * @param duration how long clients start calls (and what the results cover)
 * @param attemptTimeout each attempt's timeout on the client
 * @param networkMean mean one-way message delay
 * @param networkSd its standard deviation
 */
public record MetastableConfig(long seed, List<MetastableScenario> scenarios, int workers, Duration serviceTime,
                               int queueLimit, int clients, double baseLoad, Duration triggerStart,
                               Duration triggerLength, double triggerCapacity, Duration duration,
                               Duration attemptTimeout, Duration networkMean, Duration networkSd) {

    public MetastableConfig {
        scenarios = Checks.nonEmpty("scenarios", scenarios);
        Checks.atLeast("workers", workers, 2);
        Checks.positive("serviceTime", serviceTime);
        Checks.atLeast("queueLimit", queueLimit, 0);
        Checks.atLeast("clients", clients, 1);
        if (!(baseLoad > 0 && baseLoad <= 10)) {
            throw new IllegalArgumentException("baseLoad must be in (0, 10], got " + baseLoad);
        }
        Checks.nonNegative("triggerStart", triggerStart);
        Checks.nonNegative("triggerLength", triggerLength);
        if (!(triggerCapacity > 0 && triggerCapacity <= 1)) {
            throw new IllegalArgumentException("triggerCapacity must be in (0, 1], got " + triggerCapacity);
        }
        Checks.positive("duration", duration);
        if (duration.compareTo(triggerStart.plus(triggerLength)) < 0) {
            throw new IllegalArgumentException("duration must reach the end of the trigger, got " + duration
                    + " for a trigger ending at " + triggerStart.plus(triggerLength));
        }
        Checks.positive("attemptTimeout", attemptTimeout);
        Checks.positive("networkMean", networkMean);
        Checks.nonNegative("networkSd", networkSd);
    }

    /**
     * 50 workers of 50 ms (1,000 requests/s), up to 2,000 waiting (2 s of work), 100 clients
     * offering 90 % of the capacity, half the workers gone from 10 s to 20 s, 60 s of traffic,
     * attempts timing out after 1 s, network 10 ± 2 ms, every scenario, seed 1.
     */
    public static MetastableConfig defaults() {
        return new MetastableConfig(1L, List.of(MetastableScenario.values()), 50, Duration.ofMillis(50), 2000, 100,
                0.9, Duration.ofSeconds(10), Duration.ofSeconds(10), 0.5, Duration.ofSeconds(60), Duration.ofSeconds(1),
                Duration.ofMillis(10), Duration.ofMillis(2));
    }

    /** Requests per second the server completes with every worker serving. */
    public double capacity() {
        return workers * 1e9 / serviceTime.toNanos();
    }

    /** Calls started per second by all clients together. */
    public double offeredRate() {
        return baseLoad * capacity();
    }

    /** Workers serving during the trigger: at least one. */
    public int workersDuringTrigger() {
        return Math.max(1, (int) Math.round(workers * triggerCapacity));
    }

    public MetastableConfig withSeed(long seed) {
        return new MetastableConfig(seed, scenarios, workers, serviceTime, queueLimit, clients, baseLoad, triggerStart,
                triggerLength, triggerCapacity, duration, attemptTimeout, networkMean, networkSd);
    }

    public MetastableConfig withScenarios(List<MetastableScenario> scenarios) {
        return new MetastableConfig(seed, scenarios, workers, serviceTime, queueLimit, clients, baseLoad, triggerStart,
                triggerLength, triggerCapacity, duration, attemptTimeout, networkMean, networkSd);
    }

    /** The capacity drops to {@code capacity} of the workers from {@code start} for {@code length}. */
    public MetastableConfig withTrigger(Duration start, Duration length, double capacity) {
        return new MetastableConfig(seed, scenarios, workers, serviceTime, queueLimit, clients, baseLoad, start,
                length, capacity, duration, attemptTimeout, networkMean, networkSd);
    }

    public MetastableConfig withDuration(Duration duration) {
        return new MetastableConfig(seed, scenarios, workers, serviceTime, queueLimit, clients, baseLoad, triggerStart,
                triggerLength, triggerCapacity, duration, attemptTimeout, networkMean, networkSd);
    }

    public MetastableConfig withBaseLoad(double baseLoad) {
        return new MetastableConfig(seed, scenarios, workers, serviceTime, queueLimit, clients, baseLoad, triggerStart,
                triggerLength, triggerCapacity, duration, attemptTimeout, networkMean, networkSd);
    }

    /** A server of {@code workers} workers of {@code serviceTime} with room for {@code queueLimit} waiting. */
    public MetastableConfig withServer(int workers, Duration serviceTime, int queueLimit) {
        return new MetastableConfig(seed, scenarios, workers, serviceTime, queueLimit, clients, baseLoad, triggerStart,
                triggerLength, triggerCapacity, duration, attemptTimeout, networkMean, networkSd);
    }
}
