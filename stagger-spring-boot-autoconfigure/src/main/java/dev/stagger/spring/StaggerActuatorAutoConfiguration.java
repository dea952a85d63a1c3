package dev.stagger.spring;

import dev.stagger.spring.internal.EventLog;
import dev.stagger.spring.internal.InstanceEvents;
import dev.stagger.spring.internal.PropertyCheck;
import org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;

/** The {@code stagger} and {@code staggerevents} actuator endpoints and the breaker health contributor. */
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
            registry.watchCircuitBreakers(events::watch);
            return new StaggerEndpoint(registry, events);
        }
    }

    @Configuration(proxyBeanMethods = false)
    @ConditionalOnAvailableEndpoint(StaggerEventsEndpoint.class)
    @EnableConfigurationProperties(StaggerEventsProperties.class)
    static class EventsConfiguration {
        @Bean
        EventLog staggerEventLog(StaggerEventsProperties properties) {
            try {
                return new EventLog(properties.getSize());
            } catch (IllegalArgumentException e) {
                throw PropertyCheck.invalid("stagger.events.size", properties.getSize(), e.getMessage());
            }
        }

        @Bean
        @Order(Ordered.HIGHEST_PRECEDENCE + 3)
        RetryCustomizer staggerEventRecorder(EventLog log) {
            return log::listen;
        }

        @Bean
        @ConditionalOnMissingBean
        StaggerEventsEndpoint staggerEventsEndpoint(StaggerRegistry registry, EventLog log) {
            registry.watchCircuitBreakers(log::watch);
            return new StaggerEventsEndpoint(log);
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
