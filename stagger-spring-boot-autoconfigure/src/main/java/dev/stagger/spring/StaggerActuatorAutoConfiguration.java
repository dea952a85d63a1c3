package dev.stagger.spring;

import dev.stagger.spring.internal.InstanceEvents;
import org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;

/** The {@code stagger} actuator endpoint and the breaker health contributor. */
@AutoConfiguration(after = StaggerAutoConfiguration.class)
@ConditionalOnClass(name = "org.springframework.boot.actuate.endpoint.annotation.Endpoint")
public class StaggerActuatorAutoConfiguration {

    @Configuration(proxyBeanMethods = false)
    @ConditionalOnAvailableEndpoint(StaggerEndpoint.class)
    static class EndpointConfiguration {
        @Bean
        InstanceEvents staggerInstanceEvents() {
            return new InstanceEvents();
        }

        @Bean
        @Order(Ordered.HIGHEST_PRECEDENCE + 2)
        RetryCustomizer staggerEndReasonCounter(InstanceEvents events) {
            return events::count;
        }

        @Bean
        @ConditionalOnMissingBean
        StaggerEndpoint staggerEndpoint(StaggerRegistry registry, InstanceEvents events) {
            registry.circuitBreakers().values().forEach(events::watch);
            return new StaggerEndpoint(registry, events);
        }
    }

    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = "org.springframework.boot.health.contributor.HealthIndicator")
    @ConditionalOnProperty(prefix = "management.health.stagger", name = "enabled", matchIfMissing = true)
    static class HealthConfiguration {
        @Bean
        @ConditionalOnMissingBean(name = "staggerHealthIndicator")
        StaggerHealthIndicator staggerHealthIndicator(StaggerRegistry registry, StaggerProperties properties) {
            return new StaggerHealthIndicator(registry, properties.getHealth().getCircuitBreakerStatus());
        }
    }
}
