package dev.stagger.spring.cloud;

import dev.stagger.spring.StaggerRegistry;
import dev.stagger.spring.cloud.internal.BlockingCircuitBreaker;
import dev.stagger.spring.cloud.internal.Guards;
import java.util.function.Function;
import org.springframework.cloud.client.circuitbreaker.CircuitBreaker;
import org.springframework.cloud.client.circuitbreaker.CircuitBreakerFactory;

/**
 * Spring Cloud's {@link CircuitBreakerFactory} on Stagger, so code written against Spring Cloud's
 * API ({@code factory.create("pricing").run(supplier, fallback)}, OpenFeign's circuit-breaker
 * support) records into Stagger's named breakers and, where configured, retries with Stagger's
 * named retries: their settings are {@code stagger.*} properties, their state Stagger's meters and
 * actuator endpoints. How an id maps to those names is {@link StaggerCircuitBreakerConfig}'s: by
 * default breaker {@code id}, and retry {@code id} when {@code stagger.retries.<id>} is configured;
 * {@link #configure} and {@link #configureDefault} change it, typically from a
 * {@code Customizer<StaggerCircuitBreakerFactory>} bean.
 *
 * <p>The fallback receives whatever the call ended with: the operation's exception, or the
 * refusal of an open breaker ({@code CircuitOpenException}) or of a spent budget. Thread-safe.
 */
public class StaggerCircuitBreakerFactory
        extends CircuitBreakerFactory<StaggerCircuitBreakerConfig, StaggerCircuitBreakerConfig.Builder> {
    private final Guards guards;

    /** A factory over {@code registry}'s named instances. */
    public StaggerCircuitBreakerFactory(StaggerRegistry registry) {
        this.guards = new Guards(registry);
    }

    @Override
    public CircuitBreaker create(String id) {
        return new BlockingCircuitBreaker(guards.guard(id, getConfigurations()));
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
