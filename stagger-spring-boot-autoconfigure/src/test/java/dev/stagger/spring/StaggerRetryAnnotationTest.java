package dev.stagger.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.stagger.CircuitBreaker;
import dev.stagger.CircuitOpenException;
import dev.stagger.testing.VirtualClock;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.springframework.aop.support.AopUtils;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/** {@code @StaggerRetry} on sync, CompletionStage, Mono and Flux methods, on a virtual clock. */
class StaggerRetryAnnotationTest {
    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(StaggerAutoConfiguration.class))
            .withUserConfiguration(Beans.class)
            .withPropertyValues(
                    "stagger.retries.default.max-attempts=3",
                    "stagger.retries.default.backoff.type=fixed",
                    "stagger.retries.default.backoff.base=100ms",
                    "stagger.retries.default.backoff.jitter=none",
                    "stagger.retries.inventory.max-attempts=4",
                    "stagger.retries.guarded.circuit-breaker=downstream",
                    "stagger.circuit-breakers.downstream.consecutive-failures=2",
                    "stagger.circuit-breakers.downstream.open-duration=1m");

    @Configuration(proxyBeanMethods = false)
    static class Beans {
        @Bean
        VirtualClock clock() {
            return new VirtualClock();
        }

        @Bean
        Flaky flaky() {
            return new Flaky();
        }
    }

    /** Fails the first {@code failures} calls of each method, then answers. */
    static class Flaky {
        final AtomicInteger calls = new AtomicInteger();
        volatile int failures = 2;

        // read through methods: the bean is a class proxy, whose own fields are not the target's
        public int calls() {
            return calls.get();
        }

        public void failures(int failures) {
            this.failures = failures;
        }

        @StaggerRetry("inventory")
        public String sync() throws IOException {
            if (calls.incrementAndGet() <= failures) {
                throw new IOException("flaky " + calls.get());
            }
            return "ok after " + calls.get();
        }

        @StaggerRetry("inventory")
        public CompletionStage<String> async() {
            int n = calls.incrementAndGet();
            return n <= failures ? CompletableFuture.failedFuture(new IOException("flaky " + n))
                    : CompletableFuture.completedFuture("ok after " + n);
        }

        @StaggerRetry("inventory")
        public Mono<String> mono() {
            return Mono.defer(() -> {
                int n = calls.incrementAndGet();
                return n <= failures ? Mono.error(new IOException("flaky " + n)) : Mono.just("ok after " + n);
            });
        }

        @StaggerRetry("inventory")
        public Flux<String> flux() {
            return Flux.defer(() -> {
                int n = calls.incrementAndGet();
                return n <= failures ? Flux.concat(Flux.just("partial " + n), Flux.error(new IOException("flaky " + n)))
                        : Flux.just("a" + n, "b" + n);
            });
        }

        @StaggerRetry(name = "inventory", fallbackMethod = "cached")
        public String withFallback(String sku) throws IOException {
            calls.incrementAndGet();
            throw new IOException("down");
        }

        String cached(String sku, IOException failure) {
            return "cached " + sku + " after " + failure.getMessage();
        }

        @StaggerRetry("guarded")
        public String guarded() {
            calls.incrementAndGet();
            throw new IllegalStateException("down");
        }

        @StaggerRetry
        public String unnamed() {
            calls.incrementAndGet();
            throw new IllegalStateException("down");
        }
    }

    @Test
    void aSyncMethodIsInvokedAgainUntilItSucceedsWaitingOnTheConfiguredSchedule() {
        runner.run(context -> {
            Flaky flaky = context.getBean(Flaky.class);
            VirtualClock clock = context.getBean(VirtualClock.class);
            assertThat(AopUtils.isAopProxy(flaky)).isTrue();

            assertThat(flaky.sync()).isEqualTo("ok after 3");
            assertThat(clock.sleeps()).containsExactly(Duration.ofMillis(100), Duration.ofMillis(100));
        });
    }

    @Test
    void theNamedEntryOverridesTheDefaultAndTheLastFailureIsRethrownUnchanged() {
        runner.run(context -> {
            Flaky flaky = context.getBean(Flaky.class);
            flaky.failures(10);
            assertThatThrownBy(flaky::sync).isInstanceOf(IOException.class).hasMessage("flaky 4")
                    .satisfies(e -> assertThat(e.getSuppressed()).hasSize(3));
            assertThat(flaky.calls()).isEqualTo(4); // inventory: 4 attempts, not the default's 3
        });
    }

    @Test
    void aCompletionStageIsRetriedWithoutBlockingOnTheClocksScheduler() throws Exception {
        runner.run(context -> {
            Flaky flaky = context.getBean(Flaky.class);
            VirtualClock clock = context.getBean(VirtualClock.class);
            CompletableFuture<String> result = flaky.async().toCompletableFuture();

            assertThat(result).isNotDone(); // the retry waits on the clock, no thread sleeps
            assertThat(clock.sleeps()).isEmpty();
            clock.runUntilIdle();
            assertThat(result.get(5, TimeUnit.SECONDS)).isEqualTo("ok after 3");
            assertThat(clock.now()).isEqualTo(Duration.ofMillis(200));
        });
    }

    @Test
    void aMonoIsSubscribedAgainOnStaggersSchedule() throws Exception {
        runner.run(context -> {
            Flaky flaky = context.getBean(Flaky.class);
            VirtualClock clock = context.getBean(VirtualClock.class);
            Mono<String> mono = flaky.mono();
            assertThat(flaky.calls()).isEqualTo(0); // nothing happens before subscription

            CompletableFuture<String> result = mono.toFuture();
            assertThat(result).isNotDone();
            clock.runUntilIdle();
            assertThat(result.get(5, TimeUnit.SECONDS)).isEqualTo("ok after 3");
            assertThat(clock.sleeps()).isEmpty();
        });
    }

    @Test
    void aFluxIsSubscribedAgainAndPassesOnWhatEachAttemptEmitted() throws Exception {
        runner.run(context -> {
            Flaky flaky = context.getBean(Flaky.class);
            VirtualClock clock = context.getBean(VirtualClock.class);
            flaky.failures(1);
            CompletableFuture<List<String>> result = flaky.flux().collectList().toFuture();
            clock.runUntilIdle();
            assertThat(result.get(5, TimeUnit.SECONDS)).containsExactly("partial 1", "a2", "b2");
        });
    }

    @Test
    void cancellingAMonoStopsFurtherAttempts() {
        runner.run(context -> {
            Flaky flaky = context.getBean(Flaky.class);
            VirtualClock clock = context.getBean(VirtualClock.class);
            flaky.failures(10);
            CompletableFuture<String> result = flaky.mono().toFuture();
            assertThat(flaky.calls()).isEqualTo(1);
            result.cancel(true);
            clock.runUntilIdle();
            assertThat(flaky.calls()).isEqualTo(1);
        });
    }

    @Test
    void theFallbackMethodAnswersWithTheLastFailureAfterTheRetriesGaveUp() {
        runner.run(context -> {
            Flaky flaky = context.getBean(Flaky.class);
            assertThat(flaky.withFallback("sku-1")).isEqualTo("cached sku-1 after down");
            assertThat(flaky.calls()).isEqualTo(4);
        });
    }

    @Test
    void theRetrysBreakerOpensAndThenRefusesWithoutCallingTheMethod() {
        runner.run(context -> {
            Flaky flaky = context.getBean(Flaky.class);
            CircuitBreaker breaker = context.getBean(StaggerRegistry.class).circuitBreaker("downstream");
            assertThatThrownBy(flaky::guarded).isInstanceOf(CircuitOpenException.class);
            assertThat(flaky.calls()).isEqualTo(2); // 2 consecutive failures opened it; the third attempt was refused
            assertThat(breaker.state()).isEqualTo(CircuitBreaker.State.OPEN);

            assertThatThrownBy(flaky::guarded).isInstanceOf(CircuitOpenException.class);
            assertThat(flaky.calls()).isEqualTo(2);
        });
    }

    @Test
    void anUnnamedAnnotationUsesTheDefaultEntryUnderTheClassAndMethodName() {
        runner.run(context -> {
            Flaky flaky = context.getBean(Flaky.class);
            assertThatThrownBy(flaky::unnamed).isInstanceOf(IllegalStateException.class);
            assertThat(flaky.calls()).isEqualTo(3);
            assertThat(context.getBean(StaggerRegistry.class).retries()).containsKey("Flaky.unnamed");
        });
    }
}
