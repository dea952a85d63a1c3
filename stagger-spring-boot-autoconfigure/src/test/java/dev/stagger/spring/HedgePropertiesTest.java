package dev.stagger.spring;

import static org.assertj.core.api.Assertions.assertThat;

import dev.stagger.HedgePolicy;
import dev.stagger.testing.VirtualClock;
import dev.stagger.testsupport.Await;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/** Named hedging policies under {@code stagger.hedges.*}, used by named retries and by {@code @StaggerRetry(hedge = ..)}. */
class HedgePropertiesTest {
    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(StaggerAutoConfiguration.class))
            .withBean(VirtualClock.class, VirtualClock::new);

    @Test
    void aRetryNamingAHedgeHedgesItsCalls() {
        runner.withPropertyValues("stagger.hedges.fast.delay=50ms", "stagger.hedges.fast.percentile=95",
                        "stagger.hedges.fast.max-hedges=2", "stagger.hedges.fast.max-slow-share=0.2",
                        "stagger.retries.search.hedge=fast",
                        "stagger.retries.search.max-attempts=3")
                .run(context -> {
                    StaggerRegistry registry = context.getBean(StaggerRegistry.class);
                    HedgePolicy fast = registry.hedge("fast");
                    assertThat(fast.delay()).isEqualTo(Duration.ofMillis(50));
                    assertThat(fast.percentile()).hasValue(95.0);
                    assertThat(fast.maxHedges()).isEqualTo(2);
                    assertThat(fast.maxSlowShare()).hasValue(0.2);
                    assertThat(registry.retry("search").policy().hedge()).containsSame(fast);
                    assertThat(registry.retry("search").hedgeDelay()).contains(Duration.ofMillis(50)); // still warming up
                    assertThat(registry.hedges()).containsOnlyKeys("fast");
                });
    }

    @Test
    void aRetryGetsTheHedgeOfItsOwnNameUnlessItSaysNone() {
        runner.withPropertyValues("stagger.hedges.default.delay=20ms", "stagger.hedges.search.max-hedges=3",
                        "stagger.hedges.orders.delay=30ms", "stagger.retries.search.max-attempts=4",
                        "stagger.retries.orders.hedge=none", "stagger.retries.orders.max-attempts=4")
                .run(context -> {
                    StaggerRegistry registry = context.getBean(StaggerRegistry.class);
                    HedgePolicy search = registry.retry("search").policy().hedge().orElseThrow();
                    assertThat(search.delay()).isEqualTo(Duration.ofMillis(20)); // inherited from default
                    assertThat(search.maxHedges()).isEqualTo(3);
                    assertThat(registry.retry("orders").policy().hedge()).isEmpty();
                    assertThat(registry.retry("other").policy().hedge()).isEmpty();
                });
    }

    @Test
    void aHedgeWithoutADelayFailsStartupNamingTheProperty() {
        runner.withPropertyValues("stagger.hedges.fast.percentile=95")
                .run(context -> assertThat(context).hasFailed().getFailure().rootCause()
                        .hasMessageContaining("stagger.hedges.fast.delay").hasMessageContaining("delay must be set"));
    }

    /** {@code shown}: the value as bound (a duration in ISO-8601), which the message echoes. */
    @ParameterizedTest
    @CsvSource({"percentile, 150, 150.0", "percentile, 0, 0.0", "floor, -5ms, PT-0.005S", "warmup, -1, -1",
            "window, 0s, PT0S", "max-hedges, 9, 9", "max-hedges, 0, 0", "delay, -1ms, PT-0.001S",
            "max-slow-share, 0, 0.0", "max-slow-share, 1.5, 1.5"})
    void aBadHedgeValueFailsStartupNamingThePropertyAndTheValue(String property, String value, String shown) {
        runner.withPropertyValues("stagger.hedges.fast.delay=50ms", "stagger.hedges.fast." + property + "=" + value)
                .run(context -> assertThat(context).hasFailed().getFailure().rootCause()
                        .hasMessageContaining("Property stagger.hedges.fast." + property + " with value '" + shown + "' is invalid"));
    }

    @Test
    void aHedgedRetryOfOneAttemptFailsStartupNamingTheProperty() {
        runner.withPropertyValues("stagger.hedges.fast.delay=50ms", "stagger.retries.search.hedge=fast",
                        "stagger.retries.search.max-attempts=1")
                .run(context -> assertThat(context).hasFailed().getFailure().rootCause()
                        .hasMessageContaining("stagger.retries.search.hedge").hasMessageContaining("maxAttempts"));
    }

    @Test
    void aRetryNamingAnUnknownHedgeFailsStartup() {
        runner.withPropertyValues("stagger.retries.search.hedge=nope")
                .run(context -> assertThat(context).hasFailed().getFailure().rootCause()
                        .hasMessageContaining("stagger.retries.search.hedge").hasMessageContaining("nope"));
    }

    // ---- the annotation ----

    @Configuration(proxyBeanMethods = false)
    static class CatalogBeans {
        @Bean
        Catalog catalog() {
            return new Catalog();
        }
    }

    /** The first call of each method is slow (held until cancelled or the test ends); later ones answer at once. */
    static class Catalog {
        final AtomicInteger calls = new AtomicInteger();
        final List<CompletableFuture<String>> slow = new CopyOnWriteArrayList<>();
        final AtomicBoolean interrupted = new AtomicBoolean();
        final CountDownLatch started = new CountDownLatch(1);

        public int calls() {
            return calls.get();
        }

        public List<CompletableFuture<String>> slow() {
            return slow;
        }

        public boolean interrupted() {
            return interrupted.get();
        }

        public CountDownLatch started() {
            return started;
        }

        @StaggerRetry(value = "catalog", hedge = "fast")
        public CompletionStage<String> lookup() {
            if (calls.incrementAndGet() == 1) {
                CompletableFuture<String> held = new CompletableFuture<>();
                slow.add(held);
                return held;
            }
            return CompletableFuture.completedFuture("hedge " + calls.get());
        }

        @StaggerRetry(value = "catalog", hedge = "fast")
        public String read() {
            if (calls.incrementAndGet() == 1) {
                started.countDown();
                try {
                    Thread.sleep(TimeUnit.SECONDS.toMillis(10)); // ended by the interrupt that cancels it
                } catch (InterruptedException e) {
                    interrupted.set(true);
                }
                return "slow";
            }
            return "hedge " + calls.get();
        }
    }

    /** A method naming a hedge that is not configured. */
    static class Misspelt {
        @StaggerRetry(hedge = "fsat")
        public String read() {
            return "x";
        }
    }

    @Test
    void anAnnotatedAsyncMethodIsHedgedAfterTheDelayAndTheSlowAttemptCancelled() {
        runner.withUserConfiguration(CatalogBeans.class)
                .withPropertyValues("stagger.hedges.fast.delay=50ms", "stagger.retries.catalog.max-attempts=3")
                .run(context -> {
                    Catalog catalog = context.getBean(Catalog.class);
                    VirtualClock clock = context.getBean(VirtualClock.class);
                    CompletableFuture<String> answer = catalog.lookup().toCompletableFuture();
                    clock.advance(Duration.ofMillis(49));
                    assertThat(answer).isNotDone();
                    assertThat(catalog.calls()).as("no hedge before the delay").isEqualTo(1);

                    clock.advance(Duration.ofMillis(1));

                    assertThat(answer.get(10, TimeUnit.SECONDS)).isEqualTo("hedge 2");
                    assertThat(catalog.slow()).singleElement().satisfies(f -> assertThat(f).isCancelled());
                    // the retry named catalog itself does not hedge: the attribute is the method's
                    assertThat(context.getBean(StaggerRegistry.class).retry("catalog").policy().hedge()).isEmpty();
                });
    }

    @Test
    void anAnnotatedBlockingMethodIsHedgedAndTheSlowAttemptInterrupted() {
        runner.withUserConfiguration(CatalogBeans.class)
                .withPropertyValues("stagger.hedges.fast.delay=50ms", "stagger.retries.catalog.max-attempts=3")
                .run(context -> {
                    Catalog catalog = context.getBean(Catalog.class);
                    VirtualClock clock = context.getBean(VirtualClock.class);
                    CompletableFuture<String> answer = CompletableFuture.supplyAsync(catalog::read);
                    assertThat(catalog.started().await(10, TimeUnit.SECONDS)).isTrue();
                    Await.until(() -> clock.pendingTasks() == 1); // the hedge, armed

                    clock.advance(Duration.ofMillis(50));

                    assertThat(answer.get(10, TimeUnit.SECONDS)).isEqualTo("hedge 2");
                    Await.until(catalog::interrupted);
                });
    }

    @Test
    void anAnnotationNamingAnUnknownHedgeFailsStartup() {
        runner.withBean(Misspelt.class, Misspelt::new).withPropertyValues("stagger.hedges.fast.delay=50ms")
                .run(context -> assertThat(context).hasFailed().getFailure().rootCause()
                        .hasMessageContaining("hedge = \"fsat\"").hasMessageContaining("closest: 'fast'"));
    }
}
