package dev.stagger.spring.cloud;

import dev.stagger.spring.StaggerAutoConfiguration;
import dev.stagger.spring.StaggerRegistry;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.cloud.client.circuitbreaker.CircuitBreakerFactory;
import org.springframework.cloud.client.circuitbreaker.Customizer;
import org.springframework.cloud.client.circuitbreaker.ReactiveCircuitBreakerFactory;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * Spring Cloud CircuitBreaker on Stagger's registry: a {@link StaggerCircuitBreakerFactory}, and
 * with Reactor a {@link StaggerReactiveCircuitBreakerFactory}, each unless the application (or
 * another implementation, such as Resilience4j's) already defines a factory of that kind.
 * {@code Customizer<StaggerCircuitBreakerFactory>} and
 * {@code Customizer<StaggerReactiveCircuitBreakerFactory>} beans are applied to them, in order,
 * as Spring Cloud's own implementations do.
 */
@AutoConfiguration(after = StaggerAutoConfiguration.class)
@ConditionalOnClass({CircuitBreakerFactory.class, StaggerRegistry.class})
@ConditionalOnBean(StaggerRegistry.class)
public class StaggerSpringCloudAutoConfiguration {

    @Bean
    @ConditionalOnMissingBean(CircuitBreakerFactory.class)
    public StaggerCircuitBreakerFactory staggerCircuitBreakerFactory(StaggerRegistry registry,
            ObjectProvider<Customizer<StaggerCircuitBreakerFactory>> customizers) {
        StaggerCircuitBreakerFactory factory = new StaggerCircuitBreakerFactory(registry);
        customizers.orderedStream().forEach(c -> c.customize(factory));
        return factory;
    }

    /** The reactive factory, when Reactor is present. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = "reactor.core.publisher.Mono")
    static class Reactive {
        @Bean
        @ConditionalOnMissingBean(ReactiveCircuitBreakerFactory.class)
        StaggerReactiveCircuitBreakerFactory staggerReactiveCircuitBreakerFactory(StaggerRegistry registry,
                ObjectProvider<Customizer<StaggerReactiveCircuitBreakerFactory>> customizers) {
            StaggerReactiveCircuitBreakerFactory factory = new StaggerReactiveCircuitBreakerFactory(registry);
            customizers.orderedStream().forEach(c -> c.customize(factory));
            return factory;
        }
    }
}
