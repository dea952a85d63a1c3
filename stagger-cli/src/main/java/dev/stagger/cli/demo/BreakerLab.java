package dev.stagger.cli.demo;

import com.fasterxml.jackson.databind.JsonNode;
import dev.stagger.Backoff;
import dev.stagger.CircuitBreaker;
import dev.stagger.EndReason;
import dev.stagger.Jitter;
import dev.stagger.RetryBudget;
import dev.stagger.RetryEvent;
import dev.stagger.RetryListener;
import dev.stagger.RetryPolicy;
import dev.stagger.http.RetryingHttpClient;
import dev.stagger.http.StatusTable;
import dev.stagger.observability.RetryMetrics;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.IntFunction;
import org.jspecify.annotations.Nullable;

/**
 * Panel 3: one shared breaker and retry budget in front of the flaky downstream. "Hammer" sends
 * many calls at a chosen failure rate (the breaker opens); "budget" sends calls of which one in
 * three fails once, too few failures for the breaker but more retries than the successes pay for,
 * so the budget refuses retries; "heal" sends healthy calls until the breaker has closed.
 */
final class BreakerLab {
    private static final int MAX_HEAL_MILLIS = 15_000;

    private final FlakyDownstream downstream;
    private final URI uri;
    private final HttpClient http;
    private final MeterRegistry registry;
    final CircuitBreaker breaker;
    final RetryBudget budget;
    private final RetryingHttpClient client;
    private final ThreadLocal<EndReason> lastReason = new ThreadLocal<>();

    BreakerLab(FlakyDownstream downstream, URI uri, HttpClient http, MeterRegistry registry, RetryMetrics metrics,
               CircuitBreaker breaker, RetryBudget budget) {
        this.downstream = downstream;
        this.uri = uri;
        this.http = http;
        this.registry = registry;
        this.breaker = breaker;
        this.budget = budget;
        metrics.bind(breaker);
        metrics.bind(budget);
        this.client = RetryingHttpClient.builder(http).service("downstream").policy(policy())
                .circuitBreaker(breaker).budget(budget).listener(metrics.listener("downstream"))
                .listener(new RetryListener() {
                    @Override
                    public void onCallFinished(RetryEvent.CallFinished e) {
                        lastReason.set(e.reason()); // sync sends end on the caller's thread
                    }
                }).build();
    }

    /** The lab's breaker: trips at 50 % failures over 10 s (10 calls minimum), open 3 s, 2 probes. */
    static CircuitBreaker newBreaker() {
        return CircuitBreaker.builder("downstream").failureRateThreshold(0.5).minimumCalls(10)
                .window(Duration.ofSeconds(10)).openDuration(Duration.ofSeconds(3)).halfOpenPermits(2)
                .failurePredicate(StatusTable.defaults().failures()).build();
    }

    /** The lab's budget: 20 tokens, 0.1 per success, at most 2 free retries per second. */
    static RetryBudget newBudget() {
        return RetryBudget.builder("downstream").maxTokens(20).ratio(0.1).minRetriesPerSecond(2).build();
    }

    /** The lab's retry: 3 attempts, 20 ms base, 200 ms cap, full jitter. */
    static RetryPolicy policy() {
        return RetryPolicy.builder().maxAttempts(3)
                .backoff(Backoff.exponential(Duration.ofMillis(20)).maxDelay(Duration.ofMillis(200)).jitter(Jitter.full()))
                .build();
    }

    /** One experiment: the calls made, what reached the downstream, how calls ended, and the breaker before and after. */
    record HammerResult(int calls, long downstreamRequests, Map<EndReason, Integer> reasons, @Nullable String breakerBefore,
                        String breaker) {
    }

    HammerResult hammer(JsonNode r) throws Exception {
        int calls = Json.intField(r, "calls", 300, 1, 2000);
        double failureRate = Json.doubleField(r, "failureRate", 1.0, 0, 1);
        return run(calls, i -> randomScript(failureRate), 8);
    }

    /**
     * Every third call fails once, then succeeds: a quarter of the attempts fail, well under the
     * breaker's 50 %, but each such call wants a retry while a success deposits only 0.1 token.
     */
    HammerResult drainBudget(JsonNode r) throws Exception {
        int calls = Json.intField(r, "calls", 300, 1, 2000);
        return run(calls, i -> i % 3 == 2 ? List.of(step(503), step(200), step(200)) : List.of(step(200)), 8);
    }

    HammerResult heal(JsonNode r) throws Exception {
        long deadline = System.nanoTime() + MAX_HEAL_MILLIS * 1_000_000L;
        Map<EndReason, Integer> total = new EnumMap<>(EndReason.class);
        long requests = 0;
        int calls = 0;
        do {
            HammerResult step = run(5, i -> randomScript(0.0), 1);
            calls += step.calls();
            requests += step.downstreamRequests();
            step.reasons().forEach((k, v) -> total.merge(k, v, Integer::sum));
            if (breaker.state() == CircuitBreaker.State.CLOSED && step.reasons().getOrDefault(EndReason.SUCCESS, 0) == 5) {
                break;
            }
            Thread.sleep(250);
        } while (System.nanoTime() < deadline);
        return new HammerResult(calls, requests, total, null, breaker.state().name());
    }

    private HammerResult run(int calls, IntFunction<List<FlakyDownstream.Step>> scriptOfCall, int threads) throws Exception {
        long before = downstream.requests();
        String breakerBefore = breaker.state().name();
        Map<EndReason, Integer> reasons = new EnumMap<>(EndReason.class);
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            List<Future<EndReason>> results = new ArrayList<>();
            for (int i = 0; i < calls; i++) {
                List<FlakyDownstream.Step> script = scriptOfCall.apply(i);
                results.add(pool.submit(() -> oneCall(script)));
            }
            for (Future<EndReason> f : results) {
                reasons.merge(f.get(), 1, Integer::sum);
            }
        } finally {
            pool.shutdownNow();
        }
        return new HammerResult(calls, downstream.requests() - before, reasons, breakerBefore, breaker.state().name());
    }

    /** Three attempts' answers, each 503 with probability {@code failureRate}. */
    private static List<FlakyDownstream.Step> randomScript(double failureRate) {
        List<FlakyDownstream.Step> script = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            script.add(step(ThreadLocalRandom.current().nextDouble() < failureRate ? 503 : 200));
        }
        return script;
    }

    private static FlakyDownstream.Step step(int status) {
        return new FlakyDownstream.Step(status, 0, 2);
    }

    private EndReason oneCall(List<FlakyDownstream.Step> script) {
        String run = downstream.plan(script);
        lastReason.remove();
        try {
            client.send(HttpRequest.newBuilder(uri.resolve("?run=" + run)).timeout(Duration.ofSeconds(2))
                    .GET().build(), HttpResponse.BodyHandlers.discarding());
        } catch (Exception refusedOrFailed) {
            // the reason was recorded by the listener
        } finally {
            downstream.forget(run);
        }
        EndReason reason = lastReason.get();
        return reason == null ? EndReason.NOT_RETRYABLE : reason;
    }

    record State(String breaker, double budgetTokens, double budgetMax, long budgetRefusals, long breakerRejected,
                 Map<String, String> meters) {
    }

    State state() {
        Map<String, String> meters = new TreeMap<>();
        for (Meter m : registry.getMeters()) {
            if (!m.getId().getName().startsWith("stagger.")) {
                continue;
            }
            boolean allZero = true;
            for (var measurement : m.measure()) {
                allZero &= measurement.getValue() == 0;
            }
            if (allZero && !m.getId().getName().equals("stagger.circuit.state")) {
                continue; // keep the table to what has happened
            }
            StringBuilder tags = new StringBuilder();
            m.getId().getTags().forEach(t -> tags.append(tags.length() == 0 ? "{" : ",").append(t.getKey()).append('=').append(t.getValue()));
            if (tags.length() > 0) {
                tags.append('}');
            }
            StringBuilder value = new StringBuilder();
            m.measure().forEach(ms -> value.append(value.length() == 0 ? "" : " ").append(ms.getStatistic().getTagValueRepresentation())
                    .append('=').append(String.format("%.4g", ms.getValue())));
            meters.put(m.getId().getName() + tags, value.toString());
        }
        CircuitBreaker.Metrics bm = breaker.metrics();
        return new State(breaker.state().name(), budget.tokens(), budget.maxTokens(), budget.refusals(), bm.rejected(), meters);
    }
}
