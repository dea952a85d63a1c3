package dev.stagger.spring;

import dev.stagger.Clock;
import dev.stagger.Retry;
import dev.stagger.spring.internal.InsideTransaction;
import dev.stagger.spring.internal.InstanceFactory;
import dev.stagger.spring.internal.RetryInterceptor;
import org.jspecify.annotations.Nullable;
import org.springframework.aop.Advisor;
import org.springframework.aop.support.ComposablePointcut;
import org.springframework.aop.support.DefaultPointcutAdvisor;
import org.springframework.aop.support.annotation.AnnotationMatchingPointcut;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.context.annotation.Role;
import org.springframework.core.env.Environment;

/**
 * Stagger's core in a Boot application: {@code stagger.*} properties, the {@link StaggerRegistry}
 * of named retries, breakers and budgets, and the {@link StaggerRetry} advice. Creates no thread
 * and touches no database: retries wait on the caller's thread or on Stagger's shared scheduler,
 * which starts only when the first asynchronous wait needs it.
 */
@AutoConfiguration
@ConditionalOnClass(Retry.class)
@EnableConfigurationProperties({StaggerProperties.class, StaggerBulkheadProperties.class})
@Import(StaggerProxyRegistrar.class)
public class StaggerAutoConfiguration {
    @Bean
    @ConditionalOnMissingBean
    public StaggerRegistry staggerRegistry(Environment environment, StaggerProperties properties,
                                           ObjectProvider<Clock> clock, ObjectProvider<RetryCustomizer> customizers,
                                           ObjectProvider<BreakerFailureClassifier> classifiers) {
        InstanceFactory factory = new InstanceFactory(Binder.get(environment), clock.getIfUnique(Clock::system));
        factory.breakerFailures().classifiers(classifiers.orderedStream().toList());
        return new StaggerRegistry(factory, properties, customizers.orderedStream().toList());
    }

    /** The {@link StaggerRetry} advice; ordered outside {@code @Transactional} by default. */
    @Bean
    @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
    public static Advisor staggerRetryAdvisor(ObjectProvider<StaggerRegistry> registry, Environment environment) {
        ComposablePointcut pointcut = new ComposablePointcut(new AnnotationMatchingPointcut(StaggerRetry.class, true))
                .union(new AnnotationMatchingPointcut(null, StaggerRetry.class, true));
        InsideTransaction insideTransaction = InsideTransaction.from(environment); // a bad value fails startup
        DefaultPointcutAdvisor advisor = new DefaultPointcutAdvisor(pointcut, new LazyInterceptor(registry,
                r -> new RetryInterceptor(r, null, insideTransaction)));
        advisor.setOrder(environment.getProperty("stagger.annotation.order", Integer.class,
                new StaggerProperties.Annotation().getOrder()));
        return advisor;
    }

    /** Refuses {@code @StaggerRetry("name")} naming no configured retry (stagger.annotation.allow-unconfigured-names). */
    @Bean
    @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
    public static org.springframework.beans.factory.config.BeanPostProcessor staggerRetryNameCheck(Environment environment) {
        return new dev.stagger.spring.internal.RetryNameCheck(environment);
    }

    /** Looks the registry up on first use, so the advisor (created early) does not create it early. */
    static final class LazyInterceptor implements org.aopalliance.intercept.MethodInterceptor {
        private final ObjectProvider<StaggerRegistry> registry;
        private final java.util.function.Function<StaggerRegistry, RetryInterceptor> create;
        private volatile @Nullable RetryInterceptor delegate;

        LazyInterceptor(ObjectProvider<StaggerRegistry> registry, java.util.function.Function<StaggerRegistry, RetryInterceptor> create) {
            this.registry = registry;
            this.create = create;
        }

        @Override
        public @Nullable Object invoke(org.aopalliance.intercept.MethodInvocation invocation) throws Throwable {
            RetryInterceptor d = delegate;
            if (d == null) {
                d = create.apply(registry.getObject());
                delegate = d;
            }
            return d.invoke(invocation);
        }
    }
}
