package dev.stagger.spring;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/** {@code @StaggerRetry("name")} naming no configured retry: refused at startup unless allowed. */
class RetryNameCheckTest {
    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(StaggerAutoConfiguration.class))
            .withPropertyValues("stagger.retries.flaky.max-attempts=4", "stagger.retries.payments.max-attempts=2",
                    "stagger.retries.default.backoff.type=none");

    /** A catalog whose retry name is misspelt. */
    static class Catalog {
        final AtomicInteger calls = new AtomicInteger();

        @StaggerRetry("flakey")
        public String read() {
            calls.incrementAndGet();
            throw new IllegalStateException("down");
        }

        public int calls() {
            return calls.get();
        }
    }

    /** Names its retry right, and one method takes the default name. */
    static class Spelt {
        @StaggerRetry("flaky")
        public String read() {
            return "ok";
        }

        @StaggerRetry
        public String unnamed() {
            return "ok";
        }
    }

    @Test
    void aMisspeltNameFailsStartupNamingTheClosestConfiguredNameAndTheProperty() {
        runner.withBean(Catalog.class, Catalog::new).run(context -> {
            assertThat(context).hasFailed();
            assertThat(EveryPropertyTest.messages(context.getStartupFailure()))
                    .contains("@StaggerRetry(\"flakey\") on Catalog.read() names no configured retry")
                    .contains("closest configured name: 'flaky'")
                    .contains("stagger.annotation.allow-unconfigured-names=true");
        });
    }

    @Test
    void withUnconfiguredNamesAllowedTheMisspeltNameRunsUnderTheDefaultEntry() {
        runner.withBean(Catalog.class, Catalog::new)
                .withPropertyValues("stagger.annotation.allow-unconfigured-names=true")
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    Catalog catalog = context.getBean(Catalog.class);
                    try {
                        catalog.read();
                    } catch (IllegalStateException expected) {
                        // gave up
                    }
                    assertThat(catalog.calls()).isEqualTo(3); // the default entry's attempts, not flaky's 4
                });
    }

    @Test
    void configuredAndUnnamedRetriesStart() {
        runner.withBean(Spelt.class, Spelt::new).run(context -> {
            assertThat(context).hasNotFailed();
            assertThat(context.getBean(Spelt.class).read()).isEqualTo("ok");
            assertThat(context.getBean(Spelt.class).unnamed()).isEqualTo("ok");
        });
    }

    @Test
    void aBreakerOfTheNameCountsAsConfigured() {
        runner.withBean(Catalog.class, Catalog::new)
                .withPropertyValues("stagger.circuit-breakers.flakey.consecutive-failures=5")
                .run(context -> assertThat(context).hasNotFailed());
    }
}
