package dev.stagger.observability.internal;

import dev.stagger.AdaptiveThrottle;
import dev.stagger.Bulkhead;
import dev.stagger.CircuitBreaker;
import dev.stagger.EndReason;
import dev.stagger.Retry;
import dev.stagger.RetryBudget;
import dev.stagger.RetryEvent;
import dev.stagger.RetryListener;
import dev.stagger.observability.RetryMetrics;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import java.util.Locale;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;

/**
 * The meters of one retry name, created up front so that recording an event is an array index
 * and a meter update. Every reason's counter exists from the start, so ratios over them are
 * defined (zero, not missing) before the first failure.
 */
public final class RetryMeters implements RetryListener {
    /** Attempt numbers from this one on share the last duration timer. */
    static final int ATTEMPT_BUCKETS = 5;

    private static final EndReason[] REASONS = EndReason.values();

    private final Counter[] calls = new Counter[REASONS.length];
    private final DistributionSummary attemptsPerCall;
    private final Counter attemptSuccesses;
    private final Counter attemptFailures;
    private final Timer[] attemptDurations = new Timer[ATTEMPT_BUCKETS];
    private final Timer retryDelays;
    private final Consumer<CircuitBreaker> bindBreaker;
    private final Consumer<RetryBudget> bindBudget;
    private final MeterRegistry registry;
    private final Tags tags;
    /** Fallback counters by kind, each an array by end reason; made on first use (kinds are the user's words). */
    private final ConcurrentHashMap<String, Counter[]> fallbacks = new ConcurrentHashMap<>();
    /** Deferred failures by inner retry name; made on first use. */
    private final ConcurrentHashMap<String, Counter> deferred = new ConcurrentHashMap<>();
    private final Consumer<AdaptiveThrottle> bindThrottle;
    private final Consumer<Bulkhead> bindBulkhead;
    private volatile @Nullable Bulkhead boundBulkhead;
    /** Hedges sent, won and cancelled; made on the first hedge event (most retries never hedge). */
    private volatile Counter @Nullable [] hedges;
    private volatile @Nullable CircuitBreaker boundBreaker;
    private volatile @Nullable RetryBudget boundBudget;
    private volatile @Nullable AdaptiveThrottle boundThrottle;
    /**
     * The first hedged retry this listener was attached to, whose hedges refused the function
     * counter reads; held here, since the meter holds it weakly and a copy may be dropped.
     */
    private volatile @Nullable Retry boundHedging;

    /**
     * @param bindBreaker publishes a breaker this listener's retry turns out to have (see
     *     {@link #onAttached}); likewise {@code bindBudget}, {@code bindThrottle} and {@code bindBulkhead}
     */
    public RetryMeters(MeterRegistry registry, Tags tags, Consumer<CircuitBreaker> bindBreaker,
                       Consumer<RetryBudget> bindBudget, Consumer<AdaptiveThrottle> bindThrottle,
                       Consumer<Bulkhead> bindBulkhead) {
        this.bindBulkhead = bindBulkhead;
        this.bindBreaker = bindBreaker;
        this.bindBudget = bindBudget;
        this.registry = registry;
        this.tags = tags;
        this.bindThrottle = bindThrottle;
        for (EndReason reason : REASONS) {
            calls[reason.ordinal()] = Counter.builder(RetryMetrics.CALLS)
                    .description("Calls ended, by the reason they ended")
                    .tags(tags).tag("reason", reasonTag(reason))
                    .register(registry);
        }
        attemptsPerCall = DistributionSummary.builder(RetryMetrics.CALL_ATTEMPTS)
                .description("Attempts made per call")
                .baseUnit("attempts")
                .tags(tags)
                .publishPercentiles(0.5, 0.9, 0.99)
                .serviceLevelObjectives(1, 2, 3, 4, 5, 8)
                .register(registry);
        attemptSuccesses = attemptCounter(registry, tags, "success");
        attemptFailures = attemptCounter(registry, tags, "failure");
        for (int i = 0; i < ATTEMPT_BUCKETS; i++) {
            attemptDurations[i] = Timer.builder(RetryMetrics.ATTEMPT_DURATION)
                    .description("How long each attempt ran, by attempt number")
                    .tags(tags).tag("attempt", attemptTag(i + 1))
                    .register(registry);
        }
        retryDelays = Timer.builder(RetryMetrics.RETRY_DELAY)
                .description("Waits scheduled before retries")
                .tags(tags)
                .publishPercentiles(0.5, 0.9, 0.99)
                .register(registry);
    }

    private static Counter attemptCounter(MeterRegistry registry, Tags tags, String outcome) {
        return Counter.builder(RetryMetrics.ATTEMPTS)
                .description("Attempts made, by outcome")
                .tags(tags).tag("outcome", outcome)
                .register(registry);
    }

    /** The {@code reason} tag value: the enum name in lower case ({@code circuit_open}). */
    public static String reasonTag(EndReason reason) {
        return reason.name().toLowerCase(Locale.ROOT);
    }

    /** The {@code attempt} tag value: "1" to "4", then "5+" for every later attempt. */
    public static String attemptTag(int attempt) {
        return attempt >= ATTEMPT_BUCKETS ? ATTEMPT_BUCKETS + "+" : Integer.toString(Math.max(1, attempt));
    }

    @Override
    public void onAttemptFinished(RetryEvent.AttemptFinished event) {
        (event.failed() ? attemptFailures : attemptSuccesses).increment();
        int bucket = Math.min(Math.max(event.attempt(), 1), ATTEMPT_BUCKETS) - 1;
        attemptDurations[bucket].record(event.duration().toNanos(), TimeUnit.NANOSECONDS);
    }

    @Override
    public void onRetryScheduled(RetryEvent.RetryScheduled event) {
        long nanos;
        try {
            nanos = event.delay().toNanos();
        } catch (ArithmeticException beyondLong) {
            nanos = Long.MAX_VALUE;
        }
        retryDelays.record(nanos, TimeUnit.NANOSECONDS);
    }

    @Override
    public void onCallFinished(RetryEvent.CallFinished event) {
        calls[event.reason().ordinal()].increment();
        attemptsPerCall.record(event.attempts());
        RetryEvent.FallbackRun fallback = event.fallback();
        if (fallback != null && event.servedByFallback()) { // served: a fallback ran
            fallbackCounter(fallback.kind(), event.reason()).increment();
        }
    }

    @Override
    public void onDeferred(RetryEvent.Deferred event) {
        deferred.computeIfAbsent(event.inner(), inner -> Counter.builder(RetryMetrics.DEFERRED)
                .description("Failures not retried because an inner retry had decided on them")
                .tags(tags).tag("inner", inner)
                .register(registry)).increment();
    }

    @Override
    public void onHedgeSent(RetryEvent.HedgeSent event) {
        hedgeCounters()[0].increment();
    }

    @Override
    public void onHedgeWon(RetryEvent.HedgeWon event) {
        hedgeCounters()[1].increment();
    }

    @Override
    public void onAttemptCancelled(RetryEvent.AttemptCancelled event) {
        hedgeCounters()[2].increment();
    }

    private Counter[] hedgeCounters() {
        Counter[] h = hedges;
        if (h == null) { // registering twice returns the same counters, so a race is harmless
            h = new Counter[] {
                Counter.builder(RetryMetrics.HEDGES_SENT).description("Hedges sent while an attempt was slow")
                        .baseUnit("hedges").tags(tags).register(registry),
                Counter.builder(RetryMetrics.HEDGES_WON).description("Hedged calls won by a hedge")
                        .tags(tags).register(registry),
                Counter.builder(RetryMetrics.HEDGES_CANCELLED)
                        .description("Running attempts of hedged calls cancelled: another won or the call ended")
                        .baseUnit("attempts").tags(tags).register(registry)};
            hedges = h;
        }
        return h;
    }

    private Counter fallbackCounter(String kind, EndReason reason) {
        Counter[] byReason = fallbacks.computeIfAbsent(kind, k -> new Counter[REASONS.length]);
        Counter counter = byReason[reason.ordinal()];
        if (counter == null) {
            counter = Counter.builder(RetryMetrics.FALLBACKS)
                    .description("Calls answered by a fallback, by its kind and the reason the call ended")
                    .tags(tags).tag("kind", kind).tag("reason", reasonTag(reason))
                    .register(registry); // registering twice returns the same counter
            byReason[reason.ordinal()] = counter;
        }
        return counter;
    }

    /**
     * Publishes the breaker, budget, throttle and bulkhead of the retry this listener was attached
     * to, once each, and the hedges refused by the first hedged one.
     */
    @Override
    public void onAttached(Retry retry) {
        if (boundHedging == null && retry.hedgeDelay().isPresent()) {
            boundHedging = retry;
            FunctionCounter.builder(RetryMetrics.HEDGES_REFUSED, retry, Retry::hedgesRefused) // registering twice returns the first
                    .description("Hedges refused while most first attempts outlived the delay or hedges kept losing")
                    .baseUnit("hedges").tags(tags).register(registry);
        }
        CircuitBreaker breaker = retry.circuitBreaker().orElse(null);
        if (breaker != null && breaker != boundBreaker) {
            bindBreaker.accept(breaker);
            boundBreaker = breaker;
        }
        RetryBudget budget = retry.budget().orElse(null);
        if (budget != null && budget != boundBudget) {
            bindBudget.accept(budget);
            boundBudget = budget;
        }
        AdaptiveThrottle throttle = retry.throttle().map(AdaptiveThrottle::origin).orElse(null);
        if (throttle != null && throttle != boundThrottle) {
            bindThrottle.accept(throttle);
            boundThrottle = throttle;
        }
        Bulkhead bulkhead = retry.bulkhead().orElse(null);
        if (bulkhead != null && bulkhead != boundBulkhead) {
            bindBulkhead.accept(bulkhead);
            boundBulkhead = bulkhead;
        }
    }
}
