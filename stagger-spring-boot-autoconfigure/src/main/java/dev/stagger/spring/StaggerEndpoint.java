package dev.stagger.spring;

import dev.stagger.CircuitBreaker;
import dev.stagger.Retry;
import dev.stagger.RetryBudget;
import dev.stagger.spring.internal.InstanceEvents;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.actuate.endpoint.annotation.Selector;
import org.springframework.boot.actuate.endpoint.annotation.WriteOperation;

/**
 * {@code /actuator/stagger}: every named retry (its policy's attempts and deadline, its guards,
 * calls by end reason since startup), breaker (state, failure rate, rejections, the last
 * transitions) and budget (tokens, retries allowed and refused). A POST to
 * {@code /actuator/stagger/{breaker}} with {@code {"state": "closed"}} closes a breaker by hand.
 */
@Endpoint(id = "stagger")
public class StaggerEndpoint {
    private final StaggerRegistry registry;
    private final InstanceEvents events;

    StaggerEndpoint(StaggerRegistry registry, InstanceEvents events) {
        this.registry = registry;
        this.events = events;
    }

    @ReadOperation
    public Map<String, Object> instances() {
        Map<String, Object> retries = new LinkedHashMap<>();
        registry.retries().forEach((name, retry) -> retries.put(name, retry(retry)));
        Map<String, Object> breakers = new LinkedHashMap<>();
        registry.circuitBreakers().forEach((name, breaker) -> breakers.put(name, describe(breaker)));
        Map<String, Object> budgets = new LinkedHashMap<>();
        registry.budgets().forEach((name, budget) -> budgets.put(name, budget(budget)));
        return Map.of("retries", retries, "circuitBreakers", breakers, "budgets", budgets);
    }

    @ReadOperation
    public Map<String, Object> circuitBreaker(@Selector String name) {
        return describe(registry.circuitBreaker(name));
    }

    /**
     * Forces breaker {@code name} into {@code state}. {@code closed}: closes it and clears its
     * window. {@code open} is refused until stagger-core can hold a breaker open by hand.
     */
    @WriteOperation
    public Map<String, Object> force(@Selector String name, String state) {
        CircuitBreaker breaker = registry.circuitBreaker(name);
        if (!"closed".equalsIgnoreCase(state)) {
            throw new IllegalArgumentException("state must be closed, got " + state
                    + " (forcing a breaker open is not supported yet)");
        }
        breaker.reset();
        return describe(breaker);
    }

    private Map<String, Object> retry(Retry retry) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("maxAttempts", retry.policy().maxAttempts());
        retry.policy().deadline().ifPresent(d -> m.put("deadline", d.toString()));
        if (retry.circuitBreaker() != null) {
            m.put("circuitBreaker", retry.circuitBreaker().name());
        }
        if (retry.budget() != null) {
            m.put("budget", retry.budget().name());
        }
        m.put("calls", events.ends(retry.name()));
        return m;
    }

    private Map<String, Object> describe(CircuitBreaker breaker) {
        CircuitBreaker.Metrics metrics = breaker.metrics();
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("state", metrics.state().name().toLowerCase(Locale.ROOT).replace('_', '-'));
        m.put("failureRate", metrics.failureRate());
        m.put("calls", metrics.calls());
        m.put("failures", metrics.failures());
        m.put("rejected", metrics.rejected());
        m.put("transitions", events.transitions(breaker.name()));
        return m;
    }

    private static Map<String, Object> budget(RetryBudget budget) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("tokens", budget.tokens());
        m.put("maxTokens", budget.maxTokens());
        m.put("retriesAllowed", budget.retriesAllowed());
        m.put("refusals", budget.refusals());
        return m;
    }
}
