package dev.stagger.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.stagger.testsupport.jdbc.TestDatabases;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.boot.web.servlet.FilterRegistrationBean;

/** The starter with no properties: safe defaults, and nothing running that was not asked for. */
class MinimalApplicationTest {
    private static final AutoConfigurations ALL = AutoConfigurations.of(StaggerAutoConfiguration.class,
            StaggerHttpAutoConfiguration.class, StaggerTransactionAutoConfiguration.class,
            StaggerObservabilityAutoConfiguration.class, StaggerActuatorAutoConfiguration.class,
            StaggerIdempotencyAutoConfiguration.class, StaggerJobsAutoConfiguration.class,
            StaggerSpringRetryAutoConfiguration.class, StaggerHttpServerAutoConfiguration.class);

    private static Set<String> threadNames() {
        return Thread.getAllStackTraces().keySet().stream().filter(Thread::isAlive).map(Thread::getName)
                .collect(Collectors.toCollection(TreeSet::new));
    }

    @Test
    void withNoPropertiesTheStarterStartsNoThreadCreatesNoTableAndRegistersOnlyTheDeadlineFilter() throws Exception {
        DataSource postgres = TestDatabases.postgres();
        Set<String> tablesBefore = DatabaseTables.named(postgres, "stagger%");
        Set<String> threadsBefore = threadNames();
        new WebApplicationContextRunner().withConfiguration(ALL)
                .withBean(DataSource.class, () -> postgres)
                .run(context -> {
                    assertThat(context).hasNotFailed().hasSingleBean(StaggerRegistry.class)
                            .hasSingleBean(FilterRegistrationBean.class).hasBean("staggerDeadlineFilter");
                    assertThat(context.getBean(StaggerRegistry.class).retries()).isEmpty();
                    Set<String> started = threadNames();
                    started.removeAll(threadsBefore);
                    assertThat(started).isEmpty();
                });
        assertThat(DatabaseTables.named(postgres, "stagger%")).isEqualTo(tablesBefore);
    }

    @Test
    void aBadValueFailsStartupNamingThePropertyAndTheValue() {
        new ApplicationContextRunner().withConfiguration(ALL)
                .withPropertyValues("stagger.retries.payments.max-attempts=0")
                .run(context -> assertThat(context).hasFailed().getFailure()
                        .rootCause().isInstanceOf(InvalidConfigurationPropertyValueException.class)
                        .hasMessageContaining("stagger.retries.payments.max-attempts")
                        .hasMessageContaining("'0'")
                        .hasMessageContaining("maxAttempts must be at least 1"));
    }

    @Test
    void aBadDefaultEntryFailsEveryEntryThatInheritsIt() {
        new ApplicationContextRunner().withConfiguration(ALL)
                .withPropertyValues("stagger.retries.default.backoff.jitter=sometimes",
                        "stagger.retries.payments.max-attempts=3")
                .run(context -> assertThat(context).hasFailed().getFailure().rootCause()
                        .hasMessageContaining("stagger.retries.payments.backoff.jitter")
                        .hasMessageContaining("sometimes"));
    }

    @Test
    void aRetryNamingAnUnconfiguredBreakerFailsStartup() {
        new ApplicationContextRunner().withConfiguration(ALL)
                .withPropertyValues("stagger.retries.payments.circuit-breaker=nope")
                .run(context -> assertThat(context).hasFailed().getFailure().rootCause()
                        .hasMessageContaining("stagger.retries.payments.circuit-breaker")
                        .hasMessageContaining("nope"));
    }

    @Test
    void entriesInheritTheDefaultEntryAndOverrideIt() {
        new ApplicationContextRunner().withConfiguration(ALL)
                .withPropertyValues("stagger.retries.default.max-attempts=7", "stagger.retries.default.deadline=9s",
                        "stagger.retries.payments.max-attempts=2", "stagger.budgets.shared.ratio=0.2",
                        "stagger.retries.payments.budget=shared", "stagger.retries.orders.budget=shared")
                .run(context -> {
                    StaggerRegistry registry = context.getBean(StaggerRegistry.class);
                    assertThat(registry.retry("payments").policy().maxAttempts()).isEqualTo(2);
                    assertThat(registry.retry("payments").policy().deadline()).contains(java.time.Duration.ofSeconds(9));
                    assertThat(registry.retry("orders").policy().maxAttempts()).isEqualTo(7);
                    assertThat(registry.retry("orders").budget().orElseThrow()).isSameAs(registry.retry("payments").budget().orElseThrow());
                    assertThatThrownBy(() -> registry.circuitBreaker("none")).isInstanceOf(IllegalArgumentException.class);
                });
    }
}
