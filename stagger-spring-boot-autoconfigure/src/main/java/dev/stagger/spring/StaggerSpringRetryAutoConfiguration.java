package dev.stagger.spring;

import dev.stagger.spring.internal.InsideTransaction;
import dev.stagger.spring.internal.RetryInterceptor;
import dev.stagger.spring.internal.SpringRetryables;
import org.springframework.aop.Advisor;
import org.springframework.aop.support.ComposablePointcut;
import org.springframework.aop.support.DefaultPointcutAdvisor;
import org.springframework.aop.support.annotation.AnnotationMatchingPointcut;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Role;
import org.springframework.core.env.Environment;
import org.springframework.core.retry.RetryOperations;
import org.springframework.resilience.annotation.RetryAnnotationBeanPostProcessor;
import org.springframework.resilience.annotation.Retryable;

/**
 * Spring Framework 7's own retry API on Stagger, so code written for it switches without being
 * rewritten: {@code stagger.spring-retry.template=<retry>} defines a {@code RetryTemplate} bean
 * ({@link StaggerRetryTemplate}); {@code stagger.spring-retry.annotations=true} runs
 * {@code @Retryable} methods through Stagger retries (in place of {@code @EnableResilientMethods},
 * which must then be removed: startup fails when both would retry the same methods).
 */
@AutoConfiguration(after = StaggerAutoConfiguration.class)
@ConditionalOnClass(RetryOperations.class)
public class StaggerSpringRetryAutoConfiguration {

    @Configuration(proxyBeanMethods = false)
    @ConditionalOnProperty(prefix = "stagger.spring-retry", name = "template")
    static class Template {
        @Bean
        @ConditionalOnMissingBean(RetryOperations.class)
        StaggerRetryTemplate staggerRetryTemplate(StaggerRegistry registry, StaggerProperties properties) {
            // the configuration is conditional on stagger.spring-retry.template
            return new StaggerRetryTemplate(registry.retry(java.util.Objects.requireNonNull(
                    properties.getSpringRetry().getTemplate(), "stagger.spring-retry.template")));
        }
    }

    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(Retryable.class)
    @ConditionalOnProperty(prefix = "stagger.spring-retry", name = "annotations", havingValue = "true")
    static class Annotations {
        /** Spring's {@code @Retryable}, advised by Stagger at the order of {@code @StaggerRetry}. */
        @Bean
        @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
        static Advisor staggerSpringRetryableAdvisor(ObjectProvider<StaggerRegistry> registry, Environment environment) {
            ComposablePointcut pointcut = new ComposablePointcut(new AnnotationMatchingPointcut(Retryable.class, true))
                    .union(new AnnotationMatchingPointcut(null, Retryable.class, true));
            String retry = environment.getProperty("stagger.spring-retry.retry");
            InsideTransaction insideTransaction = InsideTransaction.from(environment);
            DefaultPointcutAdvisor advisor = new DefaultPointcutAdvisor(pointcut, new StaggerAutoConfiguration.LazyInterceptor(
                    registry, r -> new RetryInterceptor(r, new SpringRetryables(r, retry), insideTransaction)));
            advisor.setOrder(environment.getProperty("stagger.annotation.order", Integer.class,
                    new StaggerProperties.Annotation().getOrder()));
            return advisor;
        }

        /** Two retry loops around one method would multiply its attempts: refuse to start. */
        @Bean
        static SmartInitializingSingleton staggerRetryableConflictCheck(ListableBeanFactory beans) {
            return () -> {
                String[] spring = beans.getBeanNamesForType(RetryAnnotationBeanPostProcessor.class, false, false);
                if (spring.length > 0) {
                    throw new IllegalStateException("stagger.spring-retry.annotations=true and @EnableResilientMethods "
                            + "(bean '" + spring[0] + "') would both retry every @Retryable method: remove one");
                }
            };
        }
    }
}
