package dev.stagger.spring;

import dev.stagger.CircuitBreaker;
import dev.stagger.Retry;
import dev.stagger.RetryBudget;
import dev.stagger.observability.CallerContext;
import dev.stagger.observability.RetryLog;
import dev.stagger.observability.RetryMetrics;
import dev.stagger.observability.RetryObservation;
import dev.stagger.spring.internal.AttemptSpans;
import dev.stagger.spring.internal.ObservedAttemptSpans;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.observation.ObservationRegistry;
import org.springframework.beans.BeansException;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;
import org.springframework.util.ClassUtils;

/**
 * Meters and log lines for every Stagger component of the application: the registry's retries
 * (and through them their breakers, budgets, throttles and bulkheads), and any {@code Retry}, {@code CircuitBreaker},
 * {@code RetryBudget}, {@code AdaptiveThrottle}, {@code Bulkhead} or {@code RetryingHttpClient} bean the application defines itself, with the
 * names and tags of {@link RetryMetrics}. Log lines for the registry's retries (an application's
 * own {@code Retry} bean gets meters only) go through SLF4J, so Boot's logging writes
 * them (logger {@code dev.stagger.retry}; {@code logging.structured.format.console=logstash} makes
 * them JSON with their key-value pairs as fields. Not {@code ecs}: its own {@code service} object
 * collides with the lines' {@code service} pair, and logback drops the line). With an
 * {@link ObservationRegistry} bean (Boot's, with {@code management.tracing} configured), every
 * retry of the registry and every {@code Retry} bean is observed ({@link RetryObservation}: a
 * span per call, a child per attempt), and every HTTP attempt of a {@code RestClient},
 * {@code RestTemplate} or {@code WebClient} through {@link StaggerHttp} or {@link StaggerWebClient}
 * is its own client span with its own {@code traceparent}; {@code stagger.observation.enabled=false}
 * turns both off. With Micrometer Context Propagation on the class path, every retry of the registry
 * and every {@code Retry} bean runs the attempts it makes off the caller's thread (hedges, async
 * attempts the clock starts) in the caller's context ({@link CallerContext}; a {@code CallerContext}
 * bean chooses what is captured); {@code stagger.context-propagation.enabled=false} turns it off.
 */
@AutoConfiguration(before = StaggerAutoConfiguration.class,
        afterName = {"org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration",
                "org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration",
                "org.springframework.boot.micrometer.metrics.autoconfigure.export.simple.SimpleMetricsExportAutoConfiguration",
                "org.springframework.boot.micrometer.metrics.autoconfigure.export.prometheus.PrometheusMetricsExportAutoConfiguration",
                "org.springframework.boot.micrometer.observation.autoconfigure.ObservationAutoConfiguration"})
@ConditionalOnClass(RetryMetrics.class)
public class StaggerObservabilityAutoConfiguration {

    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(MeterRegistry.class)
    @ConditionalOnBean(MeterRegistry.class)
    @ConditionalOnProperty(prefix = "stagger.metrics", name = "enabled", matchIfMissing = true)
    static class Metrics {
        @Bean
        @ConditionalOnMissingBean
        RetryMetrics staggerRetryMetrics(MeterRegistry registry) {
            return RetryMetrics.of(registry);
        }

        @Bean
        @Order(Ordered.HIGHEST_PRECEDENCE)
        RetryCustomizer staggerMetricsCustomizer(RetryMetrics metrics) {
            return metrics::instrument;
        }

        /** Binds the application's own Stagger beans. */
        @Bean
        static BeanPostProcessor staggerMetricsBeanPostProcessor(ObjectProvider<RetryMetrics> metrics) {
            return new BeanPostProcessor() {
                private final boolean http = ClassUtils.isPresent("dev.stagger.http.RetryingHttpClient",
                        StaggerObservabilityAutoConfiguration.class.getClassLoader());

                @Override
                public Object postProcessAfterInitialization(Object bean, String beanName) throws BeansException {
                    if (bean instanceof Retry retry) {
                        return metrics.getObject().instrument(retry);
                    } else if (bean instanceof CircuitBreaker breaker) {
                        metrics.getObject().bind(breaker);
                    } else if (bean instanceof RetryBudget budget) {
                        metrics.getObject().bind(budget);
                    } else if (bean instanceof dev.stagger.AdaptiveThrottle throttle) {
                        metrics.getObject().bind(throttle);
                    } else if (bean instanceof dev.stagger.Bulkhead bulkhead) {
                        metrics.getObject().bind(bulkhead);
                    } else if (http && bean instanceof dev.stagger.http.RetryingHttpClient client) {
                        return client.toBuilder().listener(metrics.getObject().listener(client.service())).build();
                    }
                    return bean;
                }
            };
        }
    }

    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(ObservationRegistry.class)
    @ConditionalOnBean(ObservationRegistry.class)
    @ConditionalOnProperty(prefix = "stagger.observation", name = "enabled", matchIfMissing = true)
    static class Observations {
        @Bean
        @ConditionalOnMissingBean
        RetryObservation staggerRetryObservation(ObservationRegistry registry) {
            return RetryObservation.of(registry);
        }

        @Bean
        @Order(Ordered.HIGHEST_PRECEDENCE + 2)
        RetryCustomizer staggerObservationCustomizer(RetryObservation observation) {
            return observation::instrument;
        }

        /** Each HTTP attempt of Spring's clients through Stagger its own client span. */
        @Bean
        @ConditionalOnClass(name = "dev.stagger.http.RetryingHttpClient")
        @ConditionalOnMissingBean
        AttemptSpans staggerAttemptSpans(ObservationRegistry registry) {
            return new ObservedAttemptSpans(registry);
        }

        /** Observes the application's own {@code Retry} beans. */
        @Bean
        static BeanPostProcessor staggerObservationBeanPostProcessor(ObjectProvider<RetryObservation> observation) {
            return new BeanPostProcessor() {
                @Override
                public Object postProcessAfterInitialization(Object bean, String beanName) throws BeansException {
                    return bean instanceof Retry retry ? observation.getObject().instrument(retry) : bean;
                }
            };
        }
    }

    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = "io.micrometer.context.ContextSnapshotFactory")
    @ConditionalOnProperty(prefix = "stagger.context-propagation", name = "enabled", matchIfMissing = true)
    static class CallerContexts {
        @Bean
        @ConditionalOnMissingBean
        CallerContext staggerCallerContext() {
            return CallerContext.of();
        }

        /** First of the customizers: the caller's context is back before the attempt's observation opens. */
        @Bean
        @Order(Ordered.HIGHEST_PRECEDENCE)
        RetryCustomizer staggerCallerContextCustomizer(CallerContext context) {
            return context::instrument;
        }

        /** The application's own {@code Retry} beans; ordered, so before the observation's post-processor. */
        @Bean
        static BeanPostProcessor staggerCallerContextBeanPostProcessor(ObjectProvider<CallerContext> context) {
            return new CallerContextPostProcessor(context);
        }
    }

    /** Adds the caller's context to {@code Retry} beans, before any unordered post-processor observes them. */
    static final class CallerContextPostProcessor implements BeanPostProcessor, Ordered {
        private final ObjectProvider<CallerContext> context;

        CallerContextPostProcessor(ObjectProvider<CallerContext> context) {
            this.context = context;
        }

        @Override
        public Object postProcessAfterInitialization(Object bean, String beanName) throws BeansException {
            if (!(bean instanceof Retry retry)) {
                return bean;
            }
            // a retry observed or given a context by hand is left as it was made
            for (dev.stagger.RetryListener l : retry.listeners()) {
                if (l instanceof RetryObservation || l instanceof CallerContext) {
                    return retry;
                }
            }
            return context.getObject().instrument(retry);
        }

        @Override
        public int getOrder() {
            return Ordered.LOWEST_PRECEDENCE;
        }
    }

    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = "org.slf4j.Logger")
    @ConditionalOnProperty(prefix = "stagger.logging", name = "enabled", matchIfMissing = true)
    static class Logging {
        @Bean
        @Order(Ordered.HIGHEST_PRECEDENCE + 1)
        RetryCustomizer staggerLogCustomizer() {
            RetryLog log = RetryLog.builder().build();
            return retry -> retry.withListener(log);
        }
    }
}
