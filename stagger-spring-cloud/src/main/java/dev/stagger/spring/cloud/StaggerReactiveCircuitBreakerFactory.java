package dev.stagger.spring.cloud;

import dev.stagger.spring.StaggerRegistry;
import dev.stagger.spring.cloud.internal.Guards;
import dev.stagger.spring.cloud.internal.ReactiveStaggerCircuitBreaker;
import java.util.function.Function;
import org.springframework.cloud.client.circuitbreaker.ReactiveCircuitBreaker;
import org.springframework.cloud.client.circuitbreaker.ReactiveCircuitBreakerFactory;

/**
 * Spring Cloud's {@link ReactiveCircuitBreakerFactory} on Stagger: the reactive twin of
 * {@link StaggerCircuitBreakerFactory}, with the same mapping of ids to Stagger's named breakers
 * and retries (Spring Cloud Gateway's {@code CircuitBreaker} filter and reactive code use this
 * one). With a retry, each attempt is one subscription to the {@code Mono} or {@code Flux}, its
 * waits scheduled on the retry's clock, no thread blocked; a {@code Flux}'s elements are passed on
 * as they arrive, so a retried attempt's elements come again. Without one, the breaker guards each
 * subscription: a completion is a success, an error is judged by the breaker's predicate, a
 * cancellation counts as neither. Thread-safe.
 */
public class StaggerReactiveCircuitBreakerFactory
        extends ReactiveCircuitBreakerFactory<StaggerCircuitBreakerConfig, StaggerCircuitBreakerConfig.Builder> {
    private final StaggerRegistry registry;
    private final Guards guards;

    /** A factory over {@code registry}'s named instances. */
    public StaggerReactiveCircuitBreakerFactory(StaggerRegistry registry) {
        this.registry = registry;
        this.guards = new Guards(registry);
    }

    @Override
    public ReactiveCircuitBreaker create(String id) {
        return new ReactiveStaggerCircuitBreaker(guards.guard(id, getConfigurations()), registry.clock());
    }

    /** Maps every id no {@link #configure} call named; ids already created keep their mapping. */
    @Override
    public void configureDefault(Function<String, StaggerCircuitBreakerConfig> defaultConfiguration) {
        guards.defaults(defaultConfiguration);
    }

    @Override
    protected StaggerCircuitBreakerConfig.Builder configBuilder(String id) {
        return guards.builder(id);
    }
}
