package dev.stagger.benchmarks.spring;

import dev.stagger.spring.StaggerAutoConfiguration;
import dev.stagger.spring.StaggerRetry;
import io.github.resilience4j.retry.RetryConfig;
import io.github.resilience4j.retry.RetryRegistry;
import io.github.resilience4j.retry.annotation.Retry;
import io.github.resilience4j.spring6.fallback.DefaultFallbackDecorator;
import io.github.resilience4j.spring6.fallback.FallbackDecorators;
import io.github.resilience4j.spring6.fallback.FallbackExecutor;
import io.github.resilience4j.spring6.retry.configure.RetryAspect;
import io.github.resilience4j.spring6.retry.configure.RetryConfigurationProperties;
import io.github.resilience4j.spring6.spelresolver.DefaultSpelResolver;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.EnableAspectJAutoProxy;
import org.springframework.context.annotation.Import;
import org.springframework.core.DefaultParameterNameDiscoverer;
import org.springframework.core.env.MapPropertySource;
import org.springframework.expression.spel.standard.SpelExpressionParser;
import org.springframework.resilience.annotation.EnableResilientMethods;
import org.springframework.resilience.annotation.Retryable;

/**
 * A call through a Spring bean's retry annotation, per library: Stagger's {@code @StaggerRetry}
 * (its starter's advisor), Spring Framework 7's {@code @Retryable} ({@code @EnableResilientMethods})
 * and Resilience4j's {@code @Retry} (its {@code resilience4j-spring6} aspect, which its Boot 4 starter
 * registers), each
 * in a Spring context of its own, each bean a class-based proxy.
 *
 * <ul>
 *   <li>{@code happyPath_*}: the first attempt succeeds.</li>
 *   <li>{@code oneFailure_*}: the first attempt throws, the second succeeds, zero delay between.</li>
 * </ul>
 *
 * Configuration kept alike: 3 attempts, no wait, no listener, breaker or budget (Stagger
 * {@code stagger.retries.bench}: max-attempts 3, backoff none; Spring
 * {@code @Retryable(maxRetries = 2, delay = 0)}; Resilience4j {@code maxAttempts(3)},
 * {@code waitDuration(0)}). {@code direct_*} calls the same bean without a retry annotation: the
 * cost of the call itself. Spring's {@code @Retryable} sleeps {@code Thread.sleep(0)} before a
 * retry even with no delay, and Resilience4j's aspect sleeps for its zero wait too: that is part
 * of what their users pay, and is in their {@code oneFailure} figures.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = {"-Xms1g", "-Xmx1g", "-XX:+UseG1GC", "-XX:+AlwaysPreTouch"})
public class AnnotationProxyBenchmark {
    /** A failure the retries see, without a stack trace to fill. */
    static final RuntimeException FAILURE = new IllegalStateException("flaky", null) {
        @Override
        public synchronized Throwable fillInStackTrace() {
            return this;
        }
    };
    static final Object RESULT = new Object();

    /** Fails every other call when asked to: the first attempt of each benchmark call, then the second succeeds. */
    abstract static class Flaky {
        private boolean failNext;

        Object answer(boolean flaky) {
            if (flaky) {
                failNext = !failNext;
                if (failNext) {
                    throw FAILURE;
                }
            }
            return RESULT;
        }
    }

    public static class StaggerService extends Flaky {
        @StaggerRetry("bench")
        public Object call(boolean flaky) {
            return answer(flaky);
        }
    }

    public static class SpringService extends Flaky {
        @Retryable(maxRetries = 2, delay = 0)
        public Object call(boolean flaky) {
            return answer(flaky);
        }
    }

    public static class Resilience4jService extends Flaky {
        @Retry(name = "bench")
        public Object call(boolean flaky) {
            return answer(flaky);
        }
    }

    public static class PlainService extends Flaky {
        public Object call(boolean flaky) {
            return answer(flaky);
        }
    }

    @Configuration(proxyBeanMethods = false)
    @Import(StaggerAutoConfiguration.class)
    static class StaggerContext {
        @Bean
        StaggerService service() {
            return new StaggerService();
        }
    }

    @Configuration(proxyBeanMethods = false)
    @EnableResilientMethods(proxyTargetClass = true)
    static class SpringContext {
        @Bean
        SpringService service() {
            return new SpringService();
        }
    }

    /** What Resilience4j's Boot 4 starter ({@code resilience4j-spring-boot4}) wires for {@code @Retry}, by hand. */
    @Configuration(proxyBeanMethods = false)
    @EnableAspectJAutoProxy(proxyTargetClass = true)
    static class Resilience4jContext {
        @Bean
        RetryRegistry retryRegistry() {
            return RetryRegistry.of(Map.of("bench", RetryConfig.custom().maxAttempts(3).waitDuration(Duration.ZERO).build()));
        }

        @Bean
        RetryAspect retryAspect(RetryRegistry registry, BeanFactory beans) {
            DefaultSpelResolver spel = new DefaultSpelResolver(new SpelExpressionParser(), new DefaultParameterNameDiscoverer(), beans);
            FallbackExecutor fallbacks = new FallbackExecutor(spel, new FallbackDecorators(List.of(new DefaultFallbackDecorator())));
            return new RetryAspect(new RetryConfigurationProperties(), registry, List.of(), fallbacks, spel, null);
        }

        @Bean
        Resilience4jService service() {
            return new Resilience4jService();
        }
    }

    private AnnotationConfigApplicationContext staggerContext;
    private AnnotationConfigApplicationContext springContext;
    private AnnotationConfigApplicationContext resilience4jContext;
    private StaggerService stagger;
    private SpringService spring;
    private Resilience4jService resilience4j;
    private PlainService direct;

    private static AnnotationConfigApplicationContext start(Class<?> configuration, Map<String, Object> properties) {
        AnnotationConfigApplicationContext context = new AnnotationConfigApplicationContext();
        context.getEnvironment().getPropertySources().addFirst(new MapPropertySource("benchmark", properties));
        context.register(configuration);
        context.refresh();
        return context;
    }

    @Setup
    public void setUp() {
        staggerContext = start(StaggerContext.class, Map.of("stagger.retries.bench.max-attempts", "3",
                "stagger.retries.bench.backoff.type", "none", "stagger.logging.enabled", "false",
                // every call of the one-failure benchmark retries, which a budget would (rightly)
                // refuse past its floor; the anchors have none
                "stagger.retries.bench.budget", "none"));
        springContext = start(SpringContext.class, Map.of());
        resilience4jContext = start(Resilience4jContext.class, Map.of());
        stagger = staggerContext.getBean(StaggerService.class);
        spring = springContext.getBean(SpringService.class);
        resilience4j = resilience4jContext.getBean(Resilience4jService.class);
        direct = new PlainService();
        // the measured path must be the one taken: each proxy recovers from one failure
        for (int i = 0; i < 2; i++) {
            check("stagger", stagger.call(true));
            check("spring", spring.call(true));
            check("resilience4j", resilience4j.call(true));
        }
    }

    private static void check(String library, Object result) {
        if (result != RESULT) {
            throw new IllegalStateException(library + " did not recover from one failure");
        }
    }

    @TearDown
    public void tearDown() {
        staggerContext.close();
        springContext.close();
        resilience4jContext.close();
    }

    @Benchmark
    public Object happyPath_direct() {
        return direct.call(false);
    }

    @Benchmark
    public Object happyPath_stagger() {
        return stagger.call(false);
    }

    @Benchmark
    public Object happyPath_spring7Retryable() {
        return spring.call(false);
    }

    @Benchmark
    public Object happyPath_resilience4jAnnotation() {
        return resilience4j.call(false);
    }

    @Benchmark
    public Object oneFailure_stagger() {
        return stagger.call(true);
    }

    @Benchmark
    public Object oneFailure_spring7Retryable() {
        return spring.call(true);
    }

    @Benchmark
    public Object oneFailure_resilience4jAnnotation() {
        return resilience4j.call(true);
    }
}
