package dev.stagger.spring;

import dev.stagger.AdaptiveThrottle;
import dev.stagger.Bulkhead;
import dev.stagger.CircuitBreaker;
import dev.stagger.HedgePolicy;
import dev.stagger.Retry;
import dev.stagger.RetryBudget;
import dev.stagger.RetryPolicy;
import dev.stagger.spring.StaggerProperties.RetryProperties;
import dev.stagger.spring.internal.InstanceFactory;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;

/**
 * The named retries, circuit breakers and budgets of the application, built from
 * {@code stagger.retries}, {@code stagger.circuit-breakers}, {@code stagger.budgets},
 * {@code stagger.throttles}, {@code stagger.hedges} and {@code stagger.bulkheads}.
 *
 * <p>Every configured name is built when the context starts, so a bad value fails startup. A
 * retry asked for by a name that is not configured ({@code @StaggerRetry("inventory")}) is built
 * on first use from the {@code default} entry, like Resilience4j's instances. A retry uses the
 * breaker, budget, throttle, hedge and bulkhead its entry names, else those of its own name if configured; a budget named by
 * several retries is one shared budget. {@link RetryCustomizer}s (meters, log lines, the
 * actuator's counts) are applied to each retry once, when it is built.
 *
 * <p>Thread-safe; instances are created at most once per name.
 */
public final class StaggerRegistry {
    private final InstanceFactory factory;
    private final StaggerProperties properties;
    private final java.util.function.UnaryOperator<Retry> customizer;
    private final Map<String, Retry> retries = new ConcurrentHashMap<>();
    private final Map<String, CircuitBreaker> breakers = new ConcurrentHashMap<>();
    private final Map<String, RetryBudget> budgets = new ConcurrentHashMap<>();
    private final Map<String, AdaptiveThrottle> throttles = new ConcurrentHashMap<>();
    private final Map<String, HedgePolicy> hedges = new ConcurrentHashMap<>();
    /** Guards building a breaker after startup against registering a watcher, so each sees it once. */
    private final ReentrantLock breakerLock = new ReentrantLock();
    private final List<Consumer<CircuitBreaker>> breakerWatchers = new CopyOnWriteArrayList<>();
    private final Map<String, Bulkhead> bulkheads = new ConcurrentHashMap<>();
    /** The names under {@code stagger.bulkheads}, bound apart ({@link StaggerBulkheadProperties}). */
    private final java.util.Set<String> bulkheadNames;

    StaggerRegistry(InstanceFactory factory, StaggerProperties properties, List<RetryCustomizer> customizers) {
        this.factory = factory;
        this.properties = properties;
        List<RetryCustomizer> all = List.copyOf(customizers);
        this.customizer = retry -> {
            Retry r = retry;
            for (RetryCustomizer c : all) {
                r = c.customize(r);
            }
            return r;
        };
        for (String name : properties.getCircuitBreakers().keySet()) {
            if (!StaggerProperties.DEFAULT.equals(name)) {
                circuitBreaker(name);
            }
        }
        for (String name : properties.getBudgets().keySet()) {
            if (!StaggerProperties.DEFAULT.equals(name)) {
                budget(name);
            }
        }
        for (String name : properties.getThrottles().keySet()) {
            if (!StaggerProperties.DEFAULT.equals(name)) {
                throttle(name);
            }
        }
        for (String name : properties.getHedges().keySet()) {
            if (!StaggerProperties.DEFAULT.equals(name)) {
                hedge(name);
            }
        }
        this.bulkheadNames = factory.names("stagger.bulkheads");
        for (String name : bulkheadNames) {
            bulkhead(name);
        }
        for (String name : properties.getRetries().keySet()) {
            if (!StaggerProperties.DEFAULT.equals(name)) {
                retry(name);
            }
        }
    }

    /** The retry called {@code name}: configured, or built from {@code stagger.retries.default}. */
    public Retry retry(String name) {
        Retry existing = retries.get(name);
        return existing != null ? existing : retries.computeIfAbsent(name, this::newRetry);
    }

    /** The configured retry called {@code name}, if any (one built on demand also counts once built). */
    public Optional<Retry> findRetry(String name) {
        return Optional.ofNullable(retries.get(name));
    }

    /** The breaker called {@code name}; it must be configured under {@code stagger.circuit-breakers}. */
    public CircuitBreaker circuitBreaker(String name) {
        CircuitBreaker existing = breakers.get(name);
        if (existing != null) {
            return existing;
        }
        if (!properties.getCircuitBreakers().containsKey(name)) {
            throw new IllegalArgumentException("no circuit breaker named " + name + " under stagger.circuit-breakers; configured: "
                    + names(properties.getCircuitBreakers()));
        }
        // what it counts as a failure: exceptions, and the statuses of the HTTP clients it guards
        return breakers.computeIfAbsent(name, n -> factory.circuitBreaker(n).build());
    }

    /**
     * The breaker called {@code name}: the configured one, else one built on first use from
     * {@code stagger.circuit-breakers.default} and kept under that name. For names a framework
     * chooses (a Spring Cloud CircuitBreaker id: a gateway route, a Feign method), where requiring
     * each to be configured would fail on the first one nobody foresaw; such a breaker is listed,
     * watched and shown like a configured one.
     */
    public CircuitBreaker circuitBreakerOrDefault(String name) {
        CircuitBreaker existing = breakers.get(name);
        if (existing != null) {
            return existing;
        }
        if (properties.getCircuitBreakers().containsKey(name)) {
            return circuitBreaker(name);
        }
        breakerLock.lock();
        try {
            existing = breakers.get(name);
            if (existing != null) {
                return existing;
            }
            CircuitBreaker built = factory.circuitBreaker(name).build();
            breakers.put(name, built);
            breakerWatchers.forEach(w -> w.accept(built));
            return built;
        } finally {
            breakerLock.unlock();
        }
    }

    /**
     * Calls {@code watcher} with every breaker built so far and with every one built from now on,
     * once each (a listener of transitions, a meter binder), so that a breaker built on first use
     * is watched like the configured ones.
     */
    public void watchCircuitBreakers(Consumer<CircuitBreaker> watcher) {
        breakerLock.lock();
        try {
            breakerWatchers.add(watcher);
            new TreeMap<>(breakers).values().forEach(watcher);
        } finally {
            breakerLock.unlock();
        }
    }

    /** The budget called {@code name}; it must be configured under {@code stagger.budgets}. */
    public RetryBudget budget(String name) {
        RetryBudget existing = budgets.get(name);
        if (existing != null) {
            return existing;
        }
        if (!properties.getBudgets().containsKey(name)) {
            throw new IllegalArgumentException("no budget named " + name + " under stagger.budgets; configured: "
                    + names(properties.getBudgets()));
        }
        return budgets.computeIfAbsent(name, factory::budget);
    }

    /** The adaptive throttle called {@code name}; it must be configured under {@code stagger.throttles}. */
    public AdaptiveThrottle throttle(String name) {
        AdaptiveThrottle existing = throttles.get(name);
        if (existing != null) {
            return existing;
        }
        if (!properties.getThrottles().containsKey(name)) {
            throw new IllegalArgumentException("no throttle named " + name + " under stagger.throttles; configured: "
                    + names(properties.getThrottles()));
        }
        return throttles.computeIfAbsent(name, factory::throttle);
    }

    /** The hedging policy called {@code name}; it must be configured under {@code stagger.hedges}. */
    public HedgePolicy hedge(String name) {
        HedgePolicy existing = hedges.get(name);
        if (existing != null) {
            return existing;
        }
        if (!properties.getHedges().containsKey(name)) {
            throw new IllegalArgumentException("no hedge named " + name + " under stagger.hedges; configured: "
                    + names(properties.getHedges()));
        }
        return hedges.computeIfAbsent(name, factory::hedge);
    }

    /** The bulkhead called {@code name}; it must be configured under {@code stagger.bulkheads}. */
    public Bulkhead bulkhead(String name) {
        Bulkhead existing = bulkheads.get(name);
        if (existing != null) {
            return existing;
        }
        if (!bulkheadNames.contains(name)) {
            throw new IllegalArgumentException("no bulkhead named " + name + " under stagger.bulkheads; configured: "
                    + bulkheadNames);
        }
        return bulkheads.computeIfAbsent(name, factory::bulkhead);
    }

    /** Every bulkhead, by name. */
    public Map<String, Bulkhead> bulkheads() {
        return Collections.unmodifiableMap(new TreeMap<>(bulkheads));
    }

    /** Every hedging policy, by name. */
    public Map<String, HedgePolicy> hedges() {
        return Collections.unmodifiableMap(new TreeMap<>(hedges));
    }

    /** Every adaptive throttle, by name. */
    public Map<String, AdaptiveThrottle> throttles() {
        return Collections.unmodifiableMap(new TreeMap<>(throttles));
    }

    InstanceFactory factory() {
        return factory;
    }

    /** The clock every instance of this registry reads (a {@code Clock} bean, else the system's). */
    public dev.stagger.Clock clock() {
        return factory.clock();
    }

    /** Every retry built so far, by name. */
    public Map<String, Retry> retries() {
        return Collections.unmodifiableMap(new TreeMap<>(retries));
    }

    /** Every breaker, by name. */
    public Map<String, CircuitBreaker> circuitBreakers() {
        return Collections.unmodifiableMap(new TreeMap<>(breakers));
    }

    /** Every budget, by name. */
    public Map<String, RetryBudget> budgets() {
        return Collections.unmodifiableMap(new TreeMap<>(budgets));
    }

    /** The policy and guards of retry {@code name} without the customizers (for clients that build their own Retry). */
    public Retry bareRetry(String name) {
        RetryProperties p = factory.retryProperties(name);
        RetryPolicy policy = factory.policy(name, p);
        String hedge = p.getHedge() != null ? p.getHedge()
                : properties.getHedges().containsKey(name) && !StaggerProperties.DEFAULT.equals(name) ? name : null;
        if (hedge != null && !StaggerProperties.NO_HEDGE.equals(hedge)) {
            policy = InstanceFactory.hedged(policy, guard("hedge", name, hedge, this::hedge), InstanceFactory.key("stagger.retries", name) + ".hedge", hedge);
        }
        Retry retry = Retry.of(name, policy).withClock(factory.clock());
        String breaker = p.getCircuitBreaker() != null ? p.getCircuitBreaker()
                : properties.getCircuitBreakers().containsKey(name) && !StaggerProperties.DEFAULT.equals(name) ? name : null;
        if (breaker != null) {
            retry = retry.withCircuitBreaker(guard("circuit-breaker", name, breaker, this::circuitBreaker));
        }
        String budget = p.getBudget() != null ? p.getBudget()
                : properties.getBudgets().containsKey(name) && !StaggerProperties.DEFAULT.equals(name) ? name : null;
        if (StaggerProperties.NO_BUDGET.equals(budget)) {
            retry = retry.withoutBudget(); // the explicit opt-out of the default budget
        } else if (budget != null) {
            retry = retry.withBudget(guard("budget", name, budget, this::budget));
        }
        String throttle = p.getThrottle() != null ? p.getThrottle()
                : properties.getThrottles().containsKey(name) && !StaggerProperties.DEFAULT.equals(name) ? name : null;
        if (throttle != null) {
            retry = retry.withThrottle(guard("throttle", name, throttle, this::throttle));
        }
        String bulkhead = p.getBulkhead() != null ? p.getBulkhead() : bulkheadNames.contains(name) ? name : null;
        if (bulkhead != null) {
            Bulkhead guard = guard("bulkhead", name, bulkhead, this::bulkhead);
            try {
                retry = retry.withBulkhead(guard);
            } catch (IllegalArgumentException e) { // a hedged retry
                throw dev.stagger.spring.internal.PropertyCheck.invalid(
                        InstanceFactory.key("stagger.retries", name) + ".bulkhead", bulkhead, e.getMessage());
            }
        }
        if (p.getNesting() != null) {
            retry = retry.withNesting(p.getNesting());
        }
        return retry;
    }

    /** Applies the registry's customizers (meters, logs, counts) to a retry built elsewhere. */
    public Retry customize(Retry retry) {
        return customizer.apply(retry);
    }

    private Retry newRetry(String name) {
        return customizer.apply(bareRetry(name));
    }

    private <T> T guard(String property, String retry, String name, java.util.function.Function<String, T> lookup) {
        try {
            return lookup.apply(name);
        } catch (IllegalArgumentException e) {
            throw dev.stagger.spring.internal.PropertyCheck.invalid(
                    InstanceFactory.key("stagger.retries", retry) + "." + property, name, e.getMessage());
        }
    }

    private static String names(Map<String, ?> map) {
        return map.keySet().stream().filter(n -> !StaggerProperties.DEFAULT.equals(n)).sorted().toList().toString();
    }

    @Override
    public String toString() {
        return "StaggerRegistry{retries=" + retries.keySet() + ", circuitBreakers=" + breakers.keySet()
                + ", budgets=" + budgets.keySet() + ", bulkheads=" + bulkheads.keySet() + "}";
    }
}
