package dev.stagger.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.stagger.Backoff;
import dev.stagger.BudgetExhaustedException;
import dev.stagger.Retry;
import dev.stagger.RetryPolicy;
import dev.stagger.spring.internal.SpringRetryables;
import dev.stagger.testing.VirtualClock;
import java.io.IOException;
import java.lang.reflect.Method;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.retry.RetryException;
import org.springframework.core.retry.RetryOperations;
import org.springframework.core.retry.RetryTemplate;
import org.springframework.resilience.annotation.EnableResilientMethods;
import org.springframework.resilience.annotation.Retryable;
import org.springframework.util.backoff.BackOffExecution;

/** Spring Framework 7's RetryTemplate and @Retryable running Stagger retries, on a virtual clock. */
class SpringRetryTest {
    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(StaggerAutoConfiguration.class, StaggerSpringRetryAutoConfiguration.class))
            .withUserConfiguration(Beans.class)
            .withPropertyValues(
                    "stagger.retries.default.max-attempts=2",
                    "stagger.retries.default.backoff.type=fixed",
                    "stagger.retries.default.backoff.base=100ms",
                    "stagger.retries.default.backoff.jitter=none",
                    "stagger.retries.orders.max-attempts=3",
                    "stagger.retries.orders.backoff.base=250ms");

    @Configuration(proxyBeanMethods = false)
    static class Beans {
        @Bean
        VirtualClock clock() {
            return new VirtualClock();
        }

        @Bean
        Annotated annotated() {
            return new Annotated();
        }
    }

    /** Code written for Spring's @Retryable, its attributes left as they were. */
    static class Annotated {
        final AtomicInteger calls = new AtomicInteger();

        public int calls() {
            return calls.get();
        }

        @Retryable(maxRetries = 10, delay = 5000)
        public String alwaysFails() {
            calls.incrementAndGet();
            throw new IllegalStateException("down");
        }

        @Retryable
        @dev.stagger.spring.StaggerRetry("orders")
        public String both() {
            calls.incrementAndGet();
            throw new IllegalStateException("down");
        }

        @Retryable(excludes = IllegalArgumentException.class)
        public String refuses() {
            calls.incrementAndGet();
            throw new IllegalArgumentException("bad input");
        }
    }

    @Test
    void theRetryTemplateBeanRunsEachExecutionThroughTheNamedStaggerRetry() {
        runner.withPropertyValues("stagger.spring-retry.template=orders").run(context -> {
            RetryOperations template = context.getBean(RetryOperations.class);
            VirtualClock clock = context.getBean(VirtualClock.class);
            AtomicInteger calls = new AtomicInteger();
            Duration before = clock.now();

            String result = template.execute(() -> {
                if (calls.incrementAndGet() < 3) {
                    throw new IOException("flaky");
                }
                return "ok";
            });

            assertThat(result).isEqualTo("ok");
            assertThat(calls).hasValue(3);
            assertThat(clock.now().minus(before)).isEqualTo(Duration.ofMillis(500)); // Stagger's 250 ms twice
            assertThat(template).isInstanceOf(RetryTemplate.class);
        });
    }

    @Test
    void anExhaustedTemplateThrowsRetryExceptionWithTheLastFailureAsCause() {
        runner.withPropertyValues("stagger.spring-retry.template=orders").run(context -> {
            RetryOperations template = context.getBean(RetryOperations.class);
            AtomicInteger calls = new AtomicInteger();

            assertThatThrownBy(() -> template.execute(() -> {
                throw new IOException("attempt " + calls.incrementAndGet());
            })).isInstanceOf(RetryException.class).cause().isInstanceOf(IOException.class).hasMessage("attempt 3");
        });
    }

    @Test
    void theStaggerBudgetRefusesRetriesOfTheTemplate() {
        runner.withPropertyValues("stagger.spring-retry.template=orders", "stagger.retries.orders.budget=tight",
                "stagger.budgets.tight.max-tokens=1", "stagger.budgets.tight.ratio=0.1",
                "stagger.budgets.tight.min-retries-per-second=0").run(context -> {
            RetryOperations template = context.getBean(RetryOperations.class);
            AtomicInteger calls = new AtomicInteger();
            List<Throwable> causes = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                try {
                    template.execute(() -> {
                        calls.incrementAndGet();
                        throw new IOException("down");
                    });
                } catch (RetryException e) {
                    causes.add(e.getCause());
                }
            }
            assertThat(causes).last().isInstanceOf(BudgetExhaustedException.class);
            assertThat(calls.get()).isLessThan(9); // without the budget, 3 attempts each
        });
    }

    @Test
    void aRetryableMethodRunsUnderItsStaggerRetryNotTheAnnotationsNumbers() {
        runner.withPropertyValues("stagger.spring-retry.annotations=true").run(context -> {
            Annotated bean = context.getBean(Annotated.class);
            VirtualClock clock = context.getBean(VirtualClock.class);
            Duration before = clock.now();

            assertThatThrownBy(bean::alwaysFails).isInstanceOf(IllegalStateException.class);

            assertThat(bean.calls()).isEqualTo(2); // stagger.retries.default: 2 attempts, not maxRetries = 10
            assertThat(clock.now().minus(before)).isEqualTo(Duration.ofMillis(100));
            assertThat(context.getBean(StaggerRegistry.class).retries()).containsKey("Annotated.alwaysFails");
        });
    }

    @Test
    void aRetryableMethodKeepsTheAnnotationsExcludedTypes() {
        runner.withPropertyValues("stagger.spring-retry.annotations=true").run(context -> {
            Annotated bean = context.getBean(Annotated.class);

            assertThatThrownBy(bean::refuses).isInstanceOf(IllegalArgumentException.class);

            assertThat(bean.calls()).isEqualTo(1);
        });
    }

    /**
     * With exception types on the annotation, the method's retry was rebuilt from the policy
     * alone: the named retry's throttle was dropped and an opted-out budget came back as the
     * default one. It is now the named retry with the annotation's types added.
     */
    @Test
    void aRetryableMethodWithExceptionTypesKeepsTheNamedRetrysGuards() {
        runner.withPropertyValues("stagger.retries.default.budget=none", "stagger.retries.default.throttle=gentle",
                "stagger.throttles.gentle.k=3").run(context -> {
            Method refuses = Annotated.class.getMethod("refuses");
            Retry retry = new SpringRetryables(context.getBean(StaggerRegistry.class), null)
                    .retry(refuses, Annotated.class, "Annotated.refuses");

            assertThat(retry.budget()).as("opted out").isEmpty();
            assertThat(retry.throttle()).hasValueSatisfying(t -> assertThat(t.k()).isEqualTo(3.0));
        });
    }

    @Test
    void aMethodWithBothAnnotationsIsRefusedRatherThanRetriedTwiceOver() {
        runner.withPropertyValues("stagger.spring-retry.annotations=true").run(context -> {
            Annotated bean = context.getBean(Annotated.class);

            assertThatThrownBy(bean::both).isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("both @StaggerRetry and Spring's @Retryable");

            assertThat(bean.calls()).isZero();
        });
    }

    @Test
    void allRetryableMethodsUseTheConfiguredRetryWhenOneIsNamed() {
        runner.withPropertyValues("stagger.spring-retry.annotations=true", "stagger.spring-retry.retry=orders").run(context -> {
            Annotated bean = context.getBean(Annotated.class);

            assertThatThrownBy(bean::alwaysFails).isInstanceOf(IllegalStateException.class);

            assertThat(bean.calls()).isEqualTo(3);
        });
    }

    /** The innermost cause: a startup failure is wrapped by the context, or not, depending on where it was thrown. */
    private static Throwable root(Throwable failure) {
        Throwable t = failure;
        while (t.getCause() != null) {
            t = t.getCause();
        }
        return t;
    }

    @Configuration(proxyBeanMethods = false)
    @EnableResilientMethods
    static class SpringsOwn {
    }

    @Test
    void staggerAndSpringsOwnRetryableSupportTogetherFailStartup() {
        runner.withPropertyValues("stagger.spring-retry.annotations=true").withUserConfiguration(SpringsOwn.class)
                .run(context -> assertThat(root(context.getStartupFailure()))
                        .hasMessageContaining("would both retry every @Retryable method"));
    }

    @Test
    void withoutPropertiesNeitherTheTemplateNorTheAdviceIsDefined() {
        runner.run(context -> {
            assertThat(context).doesNotHaveBean(RetryOperations.class);
            Annotated bean = context.getBean(Annotated.class);
            assertThatThrownBy(bean::alwaysFails).isInstanceOf(IllegalStateException.class);
            assertThat(bean.calls()).isEqualTo(1);
        });
    }

    @Test
    void aStaggerPolicyAsSpringsPolicyGivesItsBackoffAndStopsAtItsAttempts() {
        StaggerRetryPolicy policy = StaggerRetryPolicy.of("p", RetryPolicy.builder().maxAttempts(4)
                .backoff(Backoff.exponential(Duration.ofMillis(100)).jitter(dev.stagger.Jitter.none())).build());
        BackOffExecution execution = policy.getBackOff().start();

        assertThat(List.of(execution.nextBackOff(), execution.nextBackOff(), execution.nextBackOff(), execution.nextBackOff()))
                .containsExactly(100L, 200L, 400L, BackOffExecution.STOP);
    }

    @Test
    void aStaggerPolicyAsSpringsPolicyAsksItsClassifier() {
        StaggerRetryPolicy policy = StaggerRetryPolicy.of("p", RetryPolicy.builder().abortOn(IllegalArgumentException.class)
                .deadline(Duration.ofSeconds(7)).build());

        assertThat(policy.shouldRetry(new IOException("x"))).isTrue();
        assertThat(policy.shouldRetry(new IllegalArgumentException("x"))).isFalse();
        assertThat(policy.getTimeout()).isEqualTo(Duration.ofSeconds(7));
    }

    @Test
    void aStaggerPolicyAsSpringsPolicyGuardsItsClassifierAsTheEngineDoes() {
        IllegalStateException broken = new IllegalStateException("classifier bug");
        StaggerRetryPolicy throwing = StaggerRetryPolicy.of("p", RetryPolicy.builder()
                .classifier((result, failure, context) -> { throw broken; }).build());
        IOException failure = new IOException("x");

        assertThat(throwing.shouldRetry(failure)).isFalse();
        assertThat(failure.getSuppressed()).containsExactly(broken);

        StaggerRetryPolicy retriesEverything = StaggerRetryPolicy.of("p", RetryPolicy.builder()
                .classifier((result, f, context) -> dev.stagger.Decision.retry()).build());
        assertThat(retriesEverything.shouldRetry(new IOException("x"))).isTrue();
        assertThat(retriesEverything.shouldRetry(new AssertionError("x"))).isFalse();
        assertThat(retriesEverything.shouldRetry(new InterruptedException("x"))).isFalse();
    }
}
