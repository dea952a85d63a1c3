package dev.stagger.observability;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import dev.stagger.AdaptiveThrottle;
import dev.stagger.Backoff;
import dev.stagger.Bulkhead;
import dev.stagger.CircuitBreaker;
import dev.stagger.EndReason;
import dev.stagger.Retry;
import dev.stagger.RetryBudget;
import dev.stagger.RetryPolicy;
import dev.stagger.RandomSource;
import dev.stagger.testing.VirtualClock;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.distribution.CountAtBucket;
import io.micrometer.core.instrument.distribution.HistogramSnapshot;
import io.micrometer.core.instrument.distribution.ValueAtPercentile;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

class RetryMetricsTest {
    private static final Duration MS_10 = Duration.ofMillis(10);

    private final VirtualClock clock = new VirtualClock();
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final RetryMetrics metrics = RetryMetrics.of(registry);

    private static RetryPolicy.Builder policy(int maxAttempts, Backoff backoff) {
        return RetryPolicy.builder().maxAttempts(maxAttempts).backoff(backoff);
    }

    private Retry payments(RetryPolicy policy) {
        return metrics.instrument(Retry.of("payments", policy).withClock(clock));
    }

    private static void callIgnoringFailure(Retry retry, Callable<Object> operation) {
        try {
            retry.call(operation);
        } catch (Exception failureIsPartOfTheScript) {
            // the meters, not the exception, are under test
        }
    }

    private double calls(String name, EndReason reason) {
        return registry.get(RetryMetrics.CALLS).tag("name", name)
                .tag("reason", reason.name().toLowerCase(Locale.ROOT)).counter().count();
    }

    private Timer attemptTimer(String attempt) {
        return registry.get(RetryMetrics.ATTEMPT_DURATION).tag("name", "payments").tag("attempt", attempt).timer();
    }

    @Test
    void everyReasonCounterExistsAtZeroAsSoonAsTheRetryIsInstrumented() {
        payments(policy(3, Backoff.none()).build());

        for (EndReason reason : EndReason.values()) {
            assertThat(calls("payments", reason)).as(reason.name()).isZero();
        }
    }

    @Test
    void countsEachCallUnderTheReasonItEnded() throws Exception {
        Retry plain = payments(policy(3, Backoff.fixed(Duration.ofMillis(100))).build());
        for (int i = 0; i < 3; i++) {
            callIgnoringFailure(plain, ScriptedOperation.on(clock).succeeds(MS_10));
        }
        for (int i = 0; i < 2; i++) {
            callIgnoringFailure(plain, ScriptedOperation.on(clock).fails(MS_10).succeeds(MS_10));
        }
        callIgnoringFailure(plain, ScriptedOperation.on(clock).fails(MS_10));

        Retry abortsOnBadInput = payments(policy(3, Backoff.none()).abortOn(IllegalArgumentException.class).build());
        callIgnoringFailure(abortsOnBadInput, ScriptedOperation.on(clock).fails(MS_10, new IllegalArgumentException("bad")));

        Retry shortDeadline = payments(policy(3, Backoff.fixed(Duration.ofMillis(200)))
                .deadline(Duration.ofMillis(150)).build());
        callIgnoringFailure(shortDeadline, ScriptedOperation.on(clock).fails(MS_10));

        RetryBudget spent = RetryBudget.builder("payments").maxTokens(1).minRetriesPerSecond(0).clock(clock).build();
        assertThat(spent.tryAcquireRetry()).isTrue();
        callIgnoringFailure(payments(policy(3, Backoff.none()).build()).withBudget(spent),
                ScriptedOperation.on(clock).fails(MS_10));

        CircuitBreaker breaker = CircuitBreaker.builder("payments").consecutiveFailures(1).clock(clock).build();
        Retry guarded = metrics.instrument(Retry.of("payments", policy(3, Backoff.none()).build())
                .withCircuitBreaker(breaker).withClock(clock));
        callIgnoringFailure(guarded, ScriptedOperation.on(clock).fails(MS_10)); // trips the breaker
        callIgnoringFailure(guarded, ScriptedOperation.on(clock).succeeds(MS_10)); // refused up front

        callIgnoringFailure(plain, () -> {
            Thread.currentThread().interrupt();
            throw new IOException("reset");
        });
        assertThat(Thread.interrupted()).as("the retry kept the interrupt status").isTrue();

        CompletableFuture<Object> pending = plain.callAsync(
                () -> CompletableFuture.failedFuture(new IOException("reset")));
        pending.cancel(true);

        assertThat(calls("payments", EndReason.SUCCESS)).isEqualTo(3);
        assertThat(calls("payments", EndReason.RECOVERED)).isEqualTo(2);
        assertThat(calls("payments", EndReason.EXHAUSTED)).isEqualTo(1);
        assertThat(calls("payments", EndReason.NOT_RETRYABLE)).isEqualTo(1);
        assertThat(calls("payments", EndReason.DEADLINE)).isEqualTo(1);
        assertThat(calls("payments", EndReason.BUDGET)).isEqualTo(1);
        assertThat(calls("payments", EndReason.CIRCUIT_OPEN)).isEqualTo(2);
        assertThat(calls("payments", EndReason.INTERRUPTED)).isEqualTo(1);
        assertThat(calls("payments", EndReason.CANCELLED)).isEqualTo(1);
    }

    @Test
    void recordsAttemptsPerCallAsADistributionWithAttemptBuckets() throws Exception {
        Retry retry = payments(policy(3, Backoff.none()).build());
        callIgnoringFailure(retry, ScriptedOperation.on(clock).succeeds(MS_10));
        callIgnoringFailure(retry, ScriptedOperation.on(clock).fails(MS_10).succeeds(MS_10));
        callIgnoringFailure(retry, ScriptedOperation.on(clock).fails(MS_10).fails(MS_10).succeeds(MS_10));
        callIgnoringFailure(retry, ScriptedOperation.on(clock).fails(MS_10));

        HistogramSnapshot snapshot = registry.get(RetryMetrics.CALL_ATTEMPTS).tag("name", "payments")
                .summary().takeSnapshot();
        assertThat(snapshot.count()).isEqualTo(4);
        assertThat(snapshot.total()).isEqualTo(9);
        assertThat(snapshot.max()).isEqualTo(3);
        assertThat(Arrays.stream(snapshot.histogramCounts())
                .collect(Collectors.toMap(CountAtBucket::bucket, CountAtBucket::count)))
                .containsEntry(1.0, 1.0).containsEntry(2.0, 2.0).containsEntry(3.0, 4.0)
                .containsEntry(4.0, 4.0).containsEntry(5.0, 4.0).containsEntry(8.0, 4.0);
        assertThat(Arrays.stream(snapshot.percentileValues()).map(ValueAtPercentile::percentile))
                .containsExactly(0.5, 0.9, 0.99);
        assertThat(snapshot.percentileValues()[2].value()).isCloseTo(3.0, within(0.1));
    }

    @Test
    void aCallRefusedBeforeItsFirstAttemptCountsZeroAttempts() {
        CircuitBreaker breaker = CircuitBreaker.builder("payments").consecutiveFailures(1).clock(clock).build();
        failThrough(breaker);
        Retry retry = metrics.instrument(Retry.of("payments", policy(3, Backoff.none()).build())
                .withCircuitBreaker(breaker).withClock(clock));

        callIgnoringFailure(retry, ScriptedOperation.on(clock).succeeds(MS_10));

        HistogramSnapshot snapshot = registry.get(RetryMetrics.CALL_ATTEMPTS).summary().takeSnapshot();
        assertThat(snapshot.count()).isEqualTo(1);
        assertThat(snapshot.total()).isZero();
        assertThat(calls("payments", EndReason.CIRCUIT_OPEN)).isEqualTo(1);
    }

    @Test
    void countsEveryAttemptBySuccessOrFailure() {
        Retry retry = payments(policy(3, Backoff.none()).build());
        callIgnoringFailure(retry, ScriptedOperation.on(clock).succeeds(MS_10));
        callIgnoringFailure(retry, ScriptedOperation.on(clock).fails(MS_10).succeeds(MS_10));
        callIgnoringFailure(retry, ScriptedOperation.on(clock).fails(MS_10));

        assertThat(registry.get(RetryMetrics.ATTEMPTS).tag("outcome", "success").counter().count()).isEqualTo(2);
        assertThat(registry.get(RetryMetrics.ATTEMPTS).tag("outcome", "failure").counter().count()).isEqualTo(4);
    }

    @Test
    void timesEachAttemptUnderItsNumberWithEveryAttemptFromTheFifthSharingOneTimer() {
        Retry retry = payments(policy(6, Backoff.none()).build());
        callIgnoringFailure(retry, ScriptedOperation.on(clock)
                .fails(Duration.ofMillis(10)).fails(Duration.ofMillis(20)).fails(Duration.ofMillis(30))
                .fails(Duration.ofMillis(40)).fails(Duration.ofMillis(50)).succeeds(Duration.ofMillis(60)));

        for (int attempt = 1; attempt <= 4; attempt++) {
            Timer timer = attemptTimer(Integer.toString(attempt));
            assertThat(timer.count()).as("attempt %d", attempt).isEqualTo(1);
            assertThat(timer.totalTime(TimeUnit.MILLISECONDS)).as("attempt %d", attempt).isEqualTo(10.0 * attempt);
        }
        Timer later = attemptTimer("5+");
        assertThat(later.count()).isEqualTo(2);
        assertThat(later.totalTime(TimeUnit.MILLISECONDS)).isEqualTo(110.0);
        assertThat(later.max(TimeUnit.MILLISECONDS)).isEqualTo(60.0);
    }

    @Test
    void recordsEachDelayActuallyScheduled() {
        Retry retry = payments(policy(4, Backoff.exponential(Duration.ofMillis(100))).build());
        callIgnoringFailure(retry, ScriptedOperation.on(clock).fails(MS_10));

        Timer delays = registry.get(RetryMetrics.RETRY_DELAY).tag("name", "payments").timer();
        assertThat(clock.sleeps()).containsExactly(Duration.ofMillis(100), Duration.ofMillis(200), Duration.ofMillis(400));
        assertThat(delays.count()).isEqualTo(3);
        assertThat(delays.totalTime(TimeUnit.MILLISECONDS)).isEqualTo(700.0);
        assertThat(delays.max(TimeUnit.MILLISECONDS)).isEqualTo(400.0);
        assertThat(delays.takeSnapshot().percentileValues()).hasSize(3);
    }

    @Test
    void breakerGaugeFollowsClosedOpenHalfOpenClosedAndEachTransitionIsCounted() {
        CircuitBreaker breaker = CircuitBreaker.builder("billing").consecutiveFailures(2)
                .openDuration(Duration.ofSeconds(10)).clock(clock).build();
        metrics.bind(breaker);
        var state = registry.get(RetryMetrics.CIRCUIT_STATE).tag("name", "billing").gauge();
        assertThat(state.value()).isEqualTo(0.0);

        failThrough(breaker);
        failThrough(breaker);
        assertThat(state.value()).isEqualTo(2.0);
        assertThat(breaker.tryAcquirePermission().isGranted()).isFalse();
        assertThat(breaker.tryAcquirePermission().isGranted()).isFalse();

        clock.advance(Duration.ofSeconds(10));
        assertThat(state.value()).as("a probe may pass now").isEqualTo(1.0);
        CircuitBreaker.Permit probe = breaker.tryAcquirePermission();
        assertThat(probe.isGranted()).isTrue();
        assertThat(state.value()).isEqualTo(1.0);

        breaker.record(probe, "ok", null);
        assertThat(state.value()).isEqualTo(0.0);

        assertThat(transitions("billing", "closed", "open")).isEqualTo(1);
        assertThat(transitions("billing", "open", "half_open")).isEqualTo(1);
        assertThat(transitions("billing", "half_open", "closed")).isEqualTo(1);
        assertThat(transitions("billing", "half_open", "open")).isZero();
        assertThat(registry.get(RetryMetrics.CIRCUIT_REJECTED).tag("name", "billing").functionCounter().count())
                .isEqualTo(2);
    }

    private double transitions(String name, String from, String to) {
        return registry.get(RetryMetrics.CIRCUIT_TRANSITIONS).tag("name", name).tag("from", from).tag("to", to)
                .counter().count();
    }

    @Test
    void budgetGaugeShowsTokensSpentAndEarnedAndRefusalsAreCounted() {
        RetryBudget budget = RetryBudget.builder("billing").maxTokens(2).ratio(0.5).minRetriesPerSecond(0)
                .clock(clock).build();
        Retry retry = metrics.instrument(Retry.of("billing", policy(5, Backoff.none()).build())
                .withBudget(budget).withClock(clock));
        var tokens = registry.get(RetryMetrics.BUDGET_TOKENS).tag("name", "billing").gauge();
        assertThat(tokens.value()).isEqualTo(2.0);

        callIgnoringFailure(retry, ScriptedOperation.on(clock).fails(MS_10));
        assertThat(tokens.value()).isZero();
        assertThat(registry.get(RetryMetrics.BUDGET_RETRIES).functionCounter().count()).isEqualTo(2);
        assertThat(registry.get(RetryMetrics.BUDGET_REFUSALS).functionCounter().count()).isEqualTo(1);
        assertThat(calls("billing", EndReason.BUDGET)).isEqualTo(1);

        callIgnoringFailure(retry, ScriptedOperation.on(clock).succeeds(MS_10));
        assertThat(tokens.value()).isEqualTo(0.5);
    }

    @Test
    void throttleGaugesShowItsWindowAndProbabilityAndRefusalsAreCounted() {
        AdaptiveThrottle throttle = AdaptiveThrottle.builder("search").clock(clock)
                .random(RandomSource.sequence(0.0)).build();
        Retry retry = metrics.instrument(Retry.of("search", policy(3, Backoff.none()).build())
                .withThrottle(throttle).withClock(clock));

        // attempt 1 is sent and fails (1 request, 0 accepts); attempt 2 is refused (p = 1/2 > 0)
        callIgnoringFailure(retry, ScriptedOperation.on(clock).fails(MS_10));

        assertThat(registry.get(RetryMetrics.THROTTLE_REQUESTS).tag("name", "search").gauge().value()).isEqualTo(2.0);
        assertThat(registry.get(RetryMetrics.THROTTLE_ACCEPTS).gauge().value()).isZero();
        assertThat(registry.get(RetryMetrics.THROTTLE_PROBABILITY).gauge().value()).isCloseTo(2 / 3.0, within(1e-9));
        assertThat(registry.get(RetryMetrics.THROTTLE_REJECTIONS).functionCounter().count()).isEqualTo(1);
        assertThat(calls("search", EndReason.THROTTLED)).isEqualTo(1);
    }

    @Test
    void bulkheadGaugesShowItsPermitsAndLimitAndRefusalsAreCounted() throws Exception {
        Bulkhead bulkhead = Bulkhead.builder("inventory").maxConcurrent(1).clock(clock).build();
        Retry retry = metrics.instrument(Retry.of("inventory", policy(3, Backoff.none()).build())
                .withBulkhead(bulkhead).withClock(clock));
        CompletableFuture<Object> holder = new CompletableFuture<>();
        retry.callAsync(() -> holder); // holds the only permit

        callIgnoringFailure(retry, () -> "refused before it runs");

        assertThat(registry.get(RetryMetrics.BULKHEAD_IN_FLIGHT).tag("name", "inventory").gauge().value()).isEqualTo(1.0);
        assertThat(registry.get(RetryMetrics.BULKHEAD_LIMIT).gauge().value()).isEqualTo(1.0);
        assertThat(registry.get(RetryMetrics.BULKHEAD_WAITING).gauge().value()).isZero();
        assertThat(registry.get(RetryMetrics.BULKHEAD_REFUSALS).functionCounter().count()).isEqualTo(1);
        assertThat(calls("inventory", EndReason.BULKHEAD_FULL)).isEqualTo(1);
        holder.complete("done");
        assertThat(registry.get(RetryMetrics.BULKHEAD_IN_FLIGHT).gauge().value()).isZero();
    }

    @Test
    void aBulkheadAddedAfterInstrumentingIsMeteredToo() {
        Bulkhead bulkhead = Bulkhead.builder("inventory").maxConcurrent(3).clock(clock).build();

        metrics.instrument(Retry.of("inventory", policy(3, Backoff.none()).build())).withBulkhead(bulkhead);

        assertThat(registry.get(RetryMetrics.BULKHEAD_LIMIT).tag("name", "inventory").gauge().value()).isEqualTo(3.0);
    }

    @Test
    void aViewOfAThrottleIsMeteredAsTheThrottleItWasMadeFrom() {
        AdaptiveThrottle throttle = AdaptiveThrottle.builder("search").clock(clock).build();
        metrics.bind(throttle.withAcceptedWhen((result, failure, decision) -> true));
        metrics.bind(throttle.withAcceptedWhen((result, failure, decision) -> false));
        metrics.bind(throttle);

        throttle.onAccepted();

        assertThat(registry.find(RetryMetrics.THROTTLE_ACCEPTS).gauges()).hasSize(1);
        assertThat(registry.get(RetryMetrics.THROTTLE_ACCEPTS).gauge().value()).isEqualTo(1.0);
    }

    @Test
    void instrumentingTwoRetriesThatShareABreakerCountsItsTransitionsOnce() {
        CircuitBreaker shared = CircuitBreaker.builder("billing").consecutiveFailures(1).clock(clock).build();
        metrics.instrument(Retry.of("invoices", policy(2, Backoff.none()).build()).withCircuitBreaker(shared));
        metrics.instrument(Retry.of("refunds", policy(2, Backoff.none()).build()).withCircuitBreaker(shared));
        metrics.bind(shared);

        failThrough(shared);

        assertThat(transitions("billing", "closed", "open")).isEqualTo(1);
    }

    @Test
    void aListenerRecordsUnderTheNameItWasCreatedFor() {
        Retry retry = Retry.of("internal-name", policy(2, Backoff.none()).build()).withClock(clock)
                .withListener(metrics.listener("billing"));

        callIgnoringFailure(retry, ScriptedOperation.on(clock).fails(MS_10).succeeds(MS_10));

        assertThat(calls("billing", EndReason.RECOVERED)).isEqualTo(1);
        assertThat(registry.find(RetryMetrics.CALLS).tag("name", "internal-name").counters()).isEmpty();
    }

    @Test
    void commonTagsAreAddedToEveryMeter() {
        RetryMetrics tagged = metrics.withTags(Tags.of("downstream", "bank"));
        tagged.instrument(Retry.of("payments", policy(2, Backoff.none()).build())
                .withCircuitBreaker(CircuitBreaker.of("bank"))
                .withBudget(RetryBudget.of("bank")));

        assertThat(registry.getMeters()).isNotEmpty().allSatisfy(meter ->
                assertThat(meter.getId().getTag("downstream")).as(meter.getId().toString()).isEqualTo("bank"));
    }

    @Test
    void tagsComeFromSmallFixedSetsAndNeverFromFailures() {
        CircuitBreaker breaker = CircuitBreaker.builder("payments").consecutiveFailures(3).clock(clock).build();
        Retry retry = metrics.instrument(Retry.of("payments", policy(7, Backoff.none()).build())
                .withCircuitBreaker(breaker).withClock(clock));
        for (int i = 0; i < 3; i++) {
            int n = i;
            callIgnoringFailure(retry, () -> {
                clock.advance(MS_10);
                throw new IOException("customer 4711 card " + n + " declined");
            });
        }

        // Micrometer adds "phi" (percentile) and "le" (bucket) gauges of its own: those are not ours.
        List<Meter> ours = registry.getMeters().stream()
                .filter(m -> m.getId().getTag("phi") == null && m.getId().getTag("le") == null).toList();
        Set<String> keys = new HashSet<>();
        Set<String> values = new HashSet<>();
        for (Meter meter : ours) {
            for (Tag tag : meter.getId().getTags()) {
                keys.add(tag.getKey());
                values.add(tag.getValue());
            }
        }
        assertThat(keys).containsExactlyInAnyOrder("name", "reason", "outcome", "attempt", "from", "to");
        assertThat(values).allSatisfy(value -> assertThat(value).matches("[a-z_]+|[1-4]|5\\+"))
                .noneMatch(value -> value.contains("4711") || value.contains("IOException"));
        int callCounters = EndReason.values().length;
        int attemptCounters = 2;
        int attemptTimers = 5;
        int transitionCounters = 6;
        int budgetMeters = 3; // the default budget's tokens, retries and refusals
        assertThat(ours).hasSize(callCounters + 1 + attemptCounters + attemptTimers + 1 // retry meters
                + 1 + transitionCounters + 1 // breaker meters
                + budgetMeters);
    }

    @Test
    void countsStayExactUnderConcurrentCalls() throws Exception {
        // every call needs a retry: without a budget, or the default one would refuse most of them
        Retry retry = payments(policy(2, Backoff.none()).build()).withoutBudget();
        int threads = 4;
        int callsPerThread = 500;
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            List<Future<?>> done = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                done.add(pool.submit(() -> {
                    for (int i = 0; i < callsPerThread; i++) {
                        callIgnoringFailure(retry, ScriptedOperation.on(clock).fails(Duration.ZERO).succeeds(Duration.ZERO));
                    }
                }));
            }
            for (Future<?> f : done) {
                f.get(1, TimeUnit.MINUTES);
            }
        } finally {
            pool.shutdownNow();
        }

        int calls = threads * callsPerThread;
        assertThat(calls("payments", EndReason.RECOVERED)).isEqualTo(calls);
        assertThat(registry.get(RetryMetrics.ATTEMPTS).tag("outcome", "failure").counter().count()).isEqualTo(calls);
        assertThat(registry.get(RetryMetrics.ATTEMPTS).tag("outcome", "success").counter().count()).isEqualTo(calls);
        assertThat(registry.get(RetryMetrics.CALL_ATTEMPTS).summary().totalAmount()).isEqualTo(2.0 * calls);
        assertThat(attemptTimer("2").count()).isEqualTo(calls);
    }

    @Test
    void refusesANullRegistryNamingIt() {
        assertThatThrownBy(() -> RetryMetrics.of(null))
                .isInstanceOf(NullPointerException.class).hasMessageContaining("registry");
    }

    /** One failed call through the breaker. */
    private static void failThrough(CircuitBreaker breaker) {
        CircuitBreaker.Permit permit = breaker.tryAcquirePermission();
        breaker.record(permit, null, new IOException("down"));
    }
}
