package dev.stagger.spring;

import static org.assertj.core.api.Assertions.assertThat;

import dev.stagger.AdaptiveThrottle;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/** Named adaptive throttles under {@code stagger.throttles.*}, bound to retries like budgets. */
class ThrottlePropertiesTest {
    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(StaggerAutoConfiguration.class));

    @Test
    void aRetryNamingAThrottleSharesIt() {
        runner.withPropertyValues("stagger.throttles.search.k=1.5", "stagger.throttles.search.window=30s",
                        "stagger.retries.search.throttle=search", "stagger.retries.suggest.throttle=search")
                .run(context -> {
                    StaggerRegistry registry = context.getBean(StaggerRegistry.class);
                    AdaptiveThrottle throttle = registry.throttle("search");
                    assertThat(throttle.k()).isEqualTo(1.5);
                    assertThat(throttle.window()).isEqualTo(Duration.ofSeconds(30));
                    assertThat(registry.retry("search").throttle()).containsSame(throttle);
                    assertThat(registry.retry("suggest").throttle()).containsSame(throttle);
                    assertThat(registry.throttles()).containsOnlyKeys("search");
                });
    }

    @Test
    void aRetryGetsTheThrottleOfItsOwnNameAndInheritsTheDefaultEntry() {
        runner.withPropertyValues("stagger.throttles.default.k=3", "stagger.throttles.orders.buckets=12",
                        "stagger.retries.orders.max-attempts=2")
                .run(context -> {
                    AdaptiveThrottle throttle = context.getBean(StaggerRegistry.class).retry("orders").throttle().orElseThrow();
                    assertThat(throttle.name()).isEqualTo("orders");
                    assertThat(throttle.k()).isEqualTo(3.0);
                    assertThat(throttle.buckets()).isEqualTo(12);
                });
    }

    @Test
    void aRetrysThrottleAndTheApplicationsOwnThrottleAreMetered() {
        new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(StaggerAutoConfiguration.class,
                        StaggerObservabilityAutoConfiguration.class))
                .withBean(io.micrometer.core.instrument.MeterRegistry.class,
                        io.micrometer.core.instrument.simple.SimpleMeterRegistry::new)
                .withBean("ownThrottle", AdaptiveThrottle.class, () -> AdaptiveThrottle.of("own"))
                .withPropertyValues("stagger.throttles.search.k=2", "stagger.retries.search.max-attempts=2")
                .run(context -> {
                    var registry = context.getBean(io.micrometer.core.instrument.MeterRegistry.class);
                    assertThat(registry.find("stagger.throttle.probability").tag("name", "search").gauge()).isNotNull();
                    assertThat(registry.find("stagger.throttle.rejections").tag("name", "own").functionCounter()).isNotNull();
                });
    }

    @Test
    void aBadValueFailsStartupNamingTheProperty() {
        runner.withPropertyValues("stagger.throttles.search.k=0.5")
                .run(context -> assertThat(context).hasFailed().getFailure().rootCause()
                        .hasMessageContaining("stagger.throttles.search.k").hasMessageContaining("0.5"));
    }

    @Test
    void aRetryNamingAnUnknownThrottleFailsStartup() {
        runner.withPropertyValues("stagger.retries.search.throttle=nope")
                .run(context -> assertThat(context).hasFailed().getFailure().rootCause()
                        .hasMessageContaining("stagger.retries.search.throttle").hasMessageContaining("nope"));
    }
}
