package dev.stagger.observability;

import dev.stagger.AdaptiveThrottle;
import dev.stagger.Bulkhead;
import dev.stagger.CircuitBreaker;
import dev.stagger.Retry;
import dev.stagger.RetryBudget;
import dev.stagger.RetryListener;
import dev.stagger.observability.internal.BreakerMeters;
import dev.stagger.observability.internal.BudgetMeters;
import dev.stagger.observability.internal.ThrottleMeters;
import dev.stagger.observability.internal.BulkheadMeters;
import dev.stagger.observability.internal.RetryMeters;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.Tags;
import java.util.Collections;
import java.util.Set;
import java.util.WeakHashMap;

/**
 * Publishes what retries, circuit breakers and retry budgets are doing to a Micrometer
 * {@link MeterRegistry}, so a retry storm shows on a dashboard before it becomes an outage.
 *
 * <p>Stagger's core has no dependencies; this binder only listens to its events
 * ({@link RetryListener}, {@link CircuitBreaker.Listener}) and polls breaker and budget state
 * when the registry is scraped. One call wires one component:
 *
 * <pre>{@code
 * RetryMetrics metrics = RetryMetrics.of(registry);
 * Retry payments = metrics.instrument(Retry.of("payments", policy).withCircuitBreaker(breaker));
 * RetryingHttpClient orders = RetryingHttpClient.builder(client)
 *         .circuitBreaker(ordersBreaker).budget(ordersBudget)
 *         .listener(metrics.listener("orders"))   // binds ordersBreaker and ordersBudget too
 *         .build();
 * metrics.bind(sharedBudget);   // a budget or breaker used outside any Retry
 * }</pre>
 *
 * <h2>Meters</h2>
 * Every meter carries the tag {@code name} (the retry's, breaker's or budget's name) plus the
 * binder's common tags. Tag values come from small fixed sets — never from exception messages,
 * keys or URLs — so the number of series is bounded by the number of names.
 * <table>
 *   <caption>Meters</caption>
 *   <tr><th>Name</th><th>Type</th><th>Extra tags</th><th>Counts</th></tr>
 *   <tr><td>{@value #CALLS}</td><td>counter</td><td>{@code reason}</td>
 *       <td>calls ended, by {@link dev.stagger.EndReason} in lower case</td></tr>
 *   <tr><td>{@value #FALLBACKS}</td><td>counter</td><td>{@code kind}, {@code reason}</td>
 *       <td>calls answered by a {@link dev.stagger.Fallback} (a stale value, a deferred answer, a
 *       message for the user), by the fallback's kind ({@code cache}, {@code queue},
 *       {@code message}, {@code custom} or the user's own word) and the call's end reason; a
 *       fallback that declined or threw is not counted. Made on first use.</td></tr>
 *   <tr><td>{@value #CALL_ATTEMPTS}</td><td>distribution summary</td><td></td>
 *       <td>attempts per call (0 when refused before the first); percentiles 0.5, 0.9, 0.99
 *       and cumulative buckets at 1, 2, 3, 4, 5, 8 attempts</td></tr>
 *   <tr><td>{@value #ATTEMPTS}</td><td>counter</td><td>{@code outcome} = success | failure</td>
 *       <td>every attempt</td></tr>
 *   <tr><td>{@value #ATTEMPT_DURATION}</td><td>timer</td><td>{@code attempt} = 1 .. 4, 5+</td>
 *       <td>how long each attempt ran, by its number</td></tr>
 *   <tr><td>{@value #RETRY_DELAY}</td><td>timer</td><td></td>
 *       <td>waits actually scheduled before a retry; percentiles 0.5, 0.9, 0.99</td></tr>
 *   <tr><td>{@value #HEDGES_SENT}</td><td>counter</td><td></td>
 *       <td>hedges a hedged call sent ({@link dev.stagger.HedgePolicy}); Prometheus
 *       {@code stagger_hedges_sent_total}. The three hedge counters are made on the first hedge event.</td></tr>
 *   <tr><td>{@value #HEDGES_WON}</td><td>counter</td><td></td>
 *       <td>hedged calls whose accepted outcome came from a hedge, not the round's first attempt</td></tr>
 *   <tr><td>{@value #HEDGES_CANCELLED}</td><td>counter</td><td></td>
 *       <td>running attempts of hedged calls cancelled because another won or the call ended</td></tr>
 *   <tr><td>{@value #HEDGES_REFUSED}</td><td>function counter</td><td></td>
 *       <td>hedges the retry's hedging refused itself ({@link Retry#hedgesRefused()}): while most
 *       first attempts outlived the delay (an overload) or while hedges kept losing; hedges the
 *       budget, breaker or throttle refused are in their own refusal counters. Made when the
 *       listener is first attached to a hedged retry, read from that retry's hedging.</td></tr>
 *   <tr><td>{@value #CIRCUIT_STATE}</td><td>gauge</td><td></td>
 *       <td>0 closed, 1 half-open, 2 open</td></tr>
 *   <tr><td>{@value #CIRCUIT_TRANSITIONS}</td><td>counter</td><td>{@code from}, {@code to}</td>
 *       <td>state changes</td></tr>
 *   <tr><td>{@value #CIRCUIT_REJECTED}</td><td>function counter</td><td></td>
 *       <td>calls refused by the breaker</td></tr>
 *   <tr><td>{@value #BUDGET_TOKENS}</td><td>gauge</td><td></td><td>tokens in the budget now</td></tr>
 *   <tr><td>{@value #BUDGET_RETRIES}</td><td>function counter</td><td></td><td>retries the budget allowed</td></tr>
 *   <tr><td>{@value #BUDGET_REFUSALS}</td><td>function counter</td><td></td><td>retries the budget refused</td></tr>
 *   <tr><td>{@value #THROTTLE_PROBABILITY}</td><td>gauge</td><td></td>
 *       <td>the throttle's probability of refusing the next request, 0 when the backend is healthy</td></tr>
 *   <tr><td>{@value #THROTTLE_REQUESTS}</td><td>gauge</td><td></td><td>requests in the throttle's window</td></tr>
 *   <tr><td>{@value #THROTTLE_ACCEPTS}</td><td>gauge</td><td></td><td>accepts in the throttle's window</td></tr>
 *   <tr><td>{@value #THROTTLE_REJECTIONS}</td><td>function counter</td><td></td>
 *       <td>requests the throttle refused locally</td></tr>
 *   <tr><td>{@value #BULKHEAD_IN_FLIGHT}</td><td>gauge</td><td></td><td>permits of the bulkhead held now</td></tr>
 *   <tr><td>{@value #BULKHEAD_LIMIT}</td><td>gauge</td><td></td>
 *       <td>the bulkhead's limit now (an adaptive one's moves with the downstream)</td></tr>
 *   <tr><td>{@value #BULKHEAD_WAITING}</td><td>gauge</td><td></td><td>callers queued for a permit</td></tr>
 *   <tr><td>{@value #BULKHEAD_REFUSALS}</td><td>function counter</td><td></td>
 *       <td>attempts the bulkhead refused</td></tr>
 * </table>
 *
 * <p>Meters are created once per name when a component is bound; recording an event looks
 * nothing up and allocates nothing beyond what Micrometer's meters do. Gauges and function
 * counters hold their breaker or budget weakly, as Micrometer's own binders do: keep a reference
 * to what you bind.
 *
 * <p>Immutable configuration and thread-safe. Binding the same breaker or budget twice through
 * one {@code RetryMetrics} is a no-op, so every Retry sharing a breaker can be instrumented
 * freely; binding it through two {@code RetryMetrics} on one registry would count its
 * transitions twice.
 */
public final class RetryMetrics {
    /** Calls answered by a fallback, tagged {@code name}, {@code kind} and {@code reason}. */
    public static final String FALLBACKS = "stagger.fallbacks";
    /**
     * Failures an enclosing retry left to the inner retry that had decided on them (one layer
     * retries each failure), tagged {@code name} (the enclosing retry) and {@code inner}.
     */
    public static final String DEFERRED = "stagger.deferred";
    /** Calls ended, tagged {@code name} and {@code reason}. */
    public static final String CALLS = "stagger.calls";
    /** Attempts per call, a distribution summary tagged {@code name}. */
    public static final String CALL_ATTEMPTS = "stagger.call.attempts";
    /** Every attempt, tagged {@code name} and {@code outcome}. */
    public static final String ATTEMPTS = "stagger.attempts";
    /** Duration of each attempt, tagged {@code name} and {@code attempt}. */
    public static final String ATTEMPT_DURATION = "stagger.attempt.duration";
    /** Waits scheduled before retries, tagged {@code name}. */
    public static final String RETRY_DELAY = "stagger.retry.delay";
    /** Hedges sent by hedged calls, tagged {@code name}. */
    public static final String HEDGES_SENT = "stagger.hedges.sent";
    /** Hedged calls won by a hedge, tagged {@code name}. */
    public static final String HEDGES_WON = "stagger.hedges.won";
    /** Running attempts of hedged calls cancelled, tagged {@code name}. */
    public static final String HEDGES_CANCELLED = "stagger.hedges.cancelled";
    /** Hedges a retry's hedging refused (overload or lost credit), tagged {@code name}. */
    public static final String HEDGES_REFUSED = "stagger.hedges.refused";
    /** Breaker state: 0 closed, 1 half-open, 2 open. */
    public static final String CIRCUIT_STATE = "stagger.circuit.state";
    /** Breaker transitions, tagged {@code from} and {@code to}. */
    public static final String CIRCUIT_TRANSITIONS = "stagger.circuit.transitions";
    /** Calls the breaker refused. */
    public static final String CIRCUIT_REJECTED = "stagger.circuit.rejected";
    /** An adaptive throttle's probability of refusing the next request. */
    public static final String THROTTLE_PROBABILITY = "stagger.throttle.probability";
    /** Requests an adaptive throttle counts in its window. */
    public static final String THROTTLE_REQUESTS = "stagger.throttle.requests";
    /** Accepts an adaptive throttle counts in its window. */
    public static final String THROTTLE_ACCEPTS = "stagger.throttle.accepts";
    /** Requests an adaptive throttle refused locally. */
    public static final String THROTTLE_REJECTIONS = "stagger.throttle.rejections";
    /** Permits of a bulkhead held now. */
    public static final String BULKHEAD_IN_FLIGHT = "stagger.bulkhead.in.flight";
    /** A bulkhead's limit now. */
    public static final String BULKHEAD_LIMIT = "stagger.bulkhead.limit";
    /** Callers queued for a bulkhead's permit now. */
    public static final String BULKHEAD_WAITING = "stagger.bulkhead.waiting";
    /** Attempts a bulkhead refused. */
    public static final String BULKHEAD_REFUSALS = "stagger.bulkhead.refusals";
    /** Tokens left in a retry budget. */
    public static final String BUDGET_TOKENS = "stagger.budget.tokens";
    /** Retries a budget allowed. */
    public static final String BUDGET_RETRIES = "stagger.budget.retries";
    /** Retries a budget refused. */
    public static final String BUDGET_REFUSALS = "stagger.budget.refusals";

    private final MeterRegistry registry;
    private final Tags commonTags;
    private final Set<Object> bound = Collections.synchronizedSet(Collections.newSetFromMap(new WeakHashMap<>()));

    private RetryMetrics(MeterRegistry registry, Tags commonTags) {
        this.registry = registry;
        this.commonTags = commonTags;
    }

    /** A binder publishing to {@code registry}. */
    public static RetryMetrics of(MeterRegistry registry) {
        if (registry == null) {
            throw new NullPointerException("registry must not be null");
        }
        return new RetryMetrics(registry, Tags.empty());
    }

    /**
     * A binder that adds {@code tags} to every meter (say {@code downstream=billing}). Keep their
     * values few: every distinct value multiplies the series.
     */
    public RetryMetrics withTags(Iterable<Tag> tags) {
        if (tags == null) {
            throw new NullPointerException("tags must not be null");
        }
        return new RetryMetrics(registry, commonTags.and(tags));
    }

    /**
     * Returns {@code retry} with a metrics listener added (a {@link Retry} is immutable, so use
     * the returned instance), and binds its circuit breaker and budget, if it has them.
     */
    public Retry instrument(Retry retry) {
        if (retry == null) {
            throw new NullPointerException("retry must not be null");
        }
        retry.circuitBreaker().ifPresent(this::bind);
        retry.budget().ifPresent(this::bind);
        retry.throttle().ifPresent(this::bind);
        retry.bulkhead().ifPresent(this::bind);
        return retry.withListener(listener(retry.name()));
    }

    /**
     * A listener recording every event it receives under {@code name}, for code that assembles
     * its own {@link Retry} ({@code retry.withListener(metrics.listener("payments"))}) or hands it
     * to a client ({@code RetryingHttpClient.Builder.listener}). The circuit breaker and
     * budget of any retry it is attached to are bound too, as {@link #bind} would.
     */
    public RetryListener listener(String name) {
        if (name == null) {
            throw new NullPointerException("name must not be null");
        }
        return new RetryMeters(registry, commonTags.and("name", name), this::bind, this::bind, this::bind, this::bind);
    }

    /** Publishes the breaker's state, transitions and rejections. Idempotent per breaker. */
    public void bind(CircuitBreaker breaker) {
        if (breaker == null) {
            throw new NullPointerException("breaker must not be null");
        }
        if (bound.add(breaker)) {
            BreakerMeters.bind(registry, commonTags.and("name", breaker.name()), breaker);
        }
    }

    /** Publishes the budget's tokens, allowed retries and refusals. Idempotent per budget. */
    public void bind(RetryBudget budget) {
        if (budget == null) {
            throw new NullPointerException("budget must not be null");
        }
        if (bound.add(budget)) {
            BudgetMeters.bind(registry, commonTags.and("name", budget.name()), budget);
        }
    }

    /**
     * Publishes the throttle's rejection probability, window counts and refusals. Idempotent per
     * throttle; a view made by {@link AdaptiveThrottle#withAcceptedWhen} binds the throttle it
     * was made from.
     */
    public void bind(AdaptiveThrottle throttle) {
        if (throttle == null) {
            throw new IllegalArgumentException("throttle must not be null");
        }
        AdaptiveThrottle origin = throttle.origin();
        if (bound.add(origin)) {
            ThrottleMeters.bind(registry, commonTags.and("name", origin.name()), origin);
        }
    }

    /** Publishes the bulkhead's permits in flight, limit, queue and refusals. Idempotent per bulkhead. */
    public void bind(Bulkhead bulkhead) {
        if (bulkhead == null) {
            throw new NullPointerException("bulkhead must not be null");
        }
        if (bound.add(bulkhead)) {
            BulkheadMeters.bind(registry, commonTags.and("name", bulkhead.name()), bulkhead);
        }
    }

    @Override
    public String toString() {
        return "RetryMetrics{" + registry.getClass().getSimpleName() + ", tags=" + commonTags + "}";
    }
}
