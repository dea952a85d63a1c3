package dev.stagger.spring;

import dev.stagger.CircuitBreaker;
import dev.stagger.Retry;
import dev.stagger.RetryBudget;
import dev.stagger.spring.internal.InstanceEvents;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.actuate.endpoint.annotation.Selector;
import org.springframework.boot.actuate.endpoint.annotation.WriteOperation;
import org.springframework.boot.actuate.endpoint.web.WebEndpointResponse;

/**
 * {@code /actuator/stagger}: every named retry (its policy's attempts and deadline, its guards,
 * calls by end reason since startup), breaker (state, failure rate, rejections, the last
 * transitions), budget (tokens, retries allowed and refused) and bulkhead (limit, permits in flight,
 * callers waiting, refusals). A POST to
 * {@code /actuator/stagger/{breaker}} with {@code {"state": "open"}} holds a breaker open until a
 * POST with {@code {"state": "closed"}} closes it. A POST naming no configured breaker, or a state
 * other than {@code open} or {@code closed}, answers {@code 400} with the reason in the body
 * ({@code {"message": "..."}}); a GET of a breaker that is not configured answers {@code 404}.
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
        Map<String, Object> bulkheads = new LinkedHashMap<>();
        registry.bulkheads().forEach((name, bulkhead) -> bulkheads.put(name, bulkhead(bulkhead)));
        return Map.of("retries", retries, "circuitBreakers", breakers, "budgets", budgets, "bulkheads", bulkheads);
    }

    @ReadOperation
    public @Nullable Map<String, Object> circuitBreaker(@Selector String name) {
        CircuitBreaker breaker = registry.circuitBreakers().get(name);
        return breaker == null ? null : describe(breaker); // null: 404
    }

    /**
     * Forces breaker {@code name} into {@code state}: {@code open} holds it open, refusing every
     * call without probes, until an operator closes it; {@code closed} closes it with a fresh
     * window (also ending a forced open). A name that is not configured or another state answers
     * {@code 400} with the reason.
     */
    @WriteOperation
    public WebEndpointResponse<Map<String, Object>> force(@Selector String name, String state) {
        CircuitBreaker breaker;
        try {
            breaker = registry.circuitBreaker(name);
        } catch (IllegalArgumentException e) {
            return badRequest(e.getMessage());
        }
        String s = state == null ? "" : state.trim().toLowerCase(Locale.ROOT);
        switch (s) {
            case "open" -> breaker.forceOpen();
            case "closed" -> breaker.reset();
            default -> {
                return badRequest("state must be open or closed, got "
                        + dev.stagger.spring.internal.PropertyCheck.echo(state));
            }
        }
        return new WebEndpointResponse<>(describe(breaker));
    }

    private static WebEndpointResponse<Map<String, Object>> badRequest(@Nullable String reason) {
        return new WebEndpointResponse<>(Map.of("message", reason), WebEndpointResponse.STATUS_BAD_REQUEST);
    }

    private Map<String, Object> retry(Retry retry) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("maxAttempts", retry.policy().maxAttempts());
        retry.policy().deadline().ifPresent(d -> m.put("deadline", d.toString()));
        if (retry.circuitBreaker().isPresent()) {
            m.put("circuitBreaker", retry.circuitBreaker().get().name());
        }
        if (retry.budget().isPresent()) {
            m.put("budget", retry.budget().get().name());
        }
        retry.bulkhead().ifPresent(b -> m.put("bulkhead", b.name()));
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

    private static Map<String, Object> bulkhead(dev.stagger.Bulkhead bulkhead) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("limit", bulkhead.limit());
        m.put("maxConcurrent", bulkhead.maxConcurrent());
        m.put("adaptive", bulkhead.isAdaptive());
        m.put("inFlight", bulkhead.inFlight());
        m.put("waiting", bulkhead.waiting());
        m.put("refusals", bulkhead.refusals());
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
