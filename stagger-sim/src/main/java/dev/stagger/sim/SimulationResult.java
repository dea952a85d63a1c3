package dev.stagger.sim;

import dev.stagger.EndReason;
import java.util.Collections;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;

/**
 * One strategy's outcome in one scenario, averaged over the configured runs. Immutable.
 *
 * <p>"Load" is requests arriving at the server, counted in 100 ms buckets and given in requests
 * per second (a bucket's count × 10). In {@code contention} a request is a read or a write; in
 * {@code outage} it is an attempt.
 *
 * @param scenario {@code contention} or {@code outage}
 * @param strategy the strategy compared
 * @param budget whether a shared retry budget guarded the retries
 * @param circuitBreaker whether a shared circuit breaker guarded the attempts
 * @param clients the number of clients
 * @param runs the runs averaged
 * @param calls mean calls that did the work per run: write calls in {@code contention} (the AWS
 *     post's "work"), attempts that reached the server in {@code outage}
 * @param completionMs mean time from the start until the last call finished (in
 *     {@code contention}: until every client had written)
 * @param peakLoad mean over runs of the busiest 100 ms bucket, in requests per second
 * @param offeredRate new calls started per second ({@code outage}); 0 in {@code contention}
 * @param loadDuringOutage requests that arrived while the server was down, divided by the calls
 *     offered in that window: 1.0 means no retry traffic at all ({@code outage}; 0 otherwise)
 * @param wastedCalls mean per run of calls that could not succeed: writes that lost the race in
 *     {@code contention}, attempts that arrived while the server was down in {@code outage}
 * @param drainMs mean time after the server recovered until every call started before recovery
 *     had finished ({@code outage}; 0 in {@code contention})
 * @param p50Ms median time from a call's start until it finished (success or giving up), pooled
 *     over all runs
 * @param p90Ms 90th percentile of the same
 * @param p99Ms 99th percentile of the same
 * @param callsStarted calls started, summed over runs (in {@code contention}: clients × runs)
 * @param succeeded calls that succeeded, summed over runs
 * @param gaveUp calls that ended without success, summed over runs
 * @param endReasons how calls ended, summed over runs, as reported by the retry engine
 * @param downFromMs when the server went down ({@code outage}; 0 otherwise)
 * @param downToMs when it came back ({@code outage}; 0 otherwise)
 * @param load mean load per 100 ms bucket from time zero, in requests per second
 * @param events simulated events processed, summed over runs
 */
public record SimulationResult(String scenario, Strategy strategy, boolean budget, boolean circuitBreaker, int clients,
                               int runs, double calls, double completionMs, double peakLoad, double offeredRate,
                               double loadDuringOutage, double wastedCalls, double drainMs, double p50Ms,
                               double p90Ms, double p99Ms, long callsStarted, long succeeded, long gaveUp,
                               Map<EndReason, Long> endReasons, double downFromMs, double downToMs,
                               List<Double> load, long events) {

    /** The width of one load bucket, in milliseconds. */
    public static final int BUCKET_MS = 100;

    public SimulationResult {
        EnumMap<EndReason, Long> ordered = new EnumMap<>(EndReason.class);
        ordered.putAll(endReasons);
        endReasons = Collections.unmodifiableMap(ordered);
        load = List.copyOf(load);
    }

    /** The strategy's label with the guards appended, e.g. {@code full-jitter+budget}. */
    public String label() {
        return strategy.label() + (budget ? "+budget" : "") + (circuitBreaker ? "+breaker" : "");
    }

    /** Calls started but neither succeeded nor gave up; always 0 when the simulator is sound. */
    public long unfinished() {
        return callsStarted - succeeded - gaveUp;
    }
}
