package dev.stagger.spring.cloud;

import dev.stagger.spring.cloud.internal.StaggerCircuitBreakerFilterFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.cloud.gateway.filter.factory.SpringCloudCircuitBreakerFilterFactory;
import org.springframework.context.annotation.Bean;
import org.springframework.web.reactive.DispatcherHandler;

/**
 * Spring Cloud Gateway's {@code CircuitBreaker} route filter on Stagger's breakers. Gateway itself
 * registers that filter only with Resilience4j on the class path; with Stagger's
 * {@link StaggerReactiveCircuitBreakerFactory} in the context, this registers it on that factory,
 * so a route's {@code CircuitBreaker} filter with {@code name: pricing} runs on Stagger's breaker
 * (and retry, when configured) {@code pricing}.
 */
@AutoConfiguration(after = StaggerSpringCloudAutoConfiguration.class,
        afterName = "org.springframework.cloud.gateway.config.GatewayResilience4JCircuitBreakerAutoConfiguration")
@ConditionalOnClass({SpringCloudCircuitBreakerFilterFactory.class, DispatcherHandler.class})
@ConditionalOnBean(StaggerReactiveCircuitBreakerFactory.class)
public class StaggerGatewayAutoConfiguration {

    @Bean
    @ConditionalOnMissingBean(SpringCloudCircuitBreakerFilterFactory.class)
    SpringCloudCircuitBreakerFilterFactory staggerCircuitBreakerGatewayFilterFactory(StaggerReactiveCircuitBreakerFactory factory,
                                                                                      ObjectProvider<DispatcherHandler> dispatcherHandler) {
        return new StaggerCircuitBreakerFilterFactory(factory, dispatcherHandler);
    }
}
