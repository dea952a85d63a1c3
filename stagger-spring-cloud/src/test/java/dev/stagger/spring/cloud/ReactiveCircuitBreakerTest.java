package dev.stagger.spring.cloud;

import static org.assertj.core.api.Assertions.assertThat;

import dev.stagger.CircuitBreaker;
import dev.stagger.CircuitOpenException;
import dev.stagger.spring.StaggerAutoConfiguration;
import dev.stagger.spring.StaggerRegistry;
import dev.stagger.testing.VirtualClock;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import java.util.function.Function;
import org.springframework.cloud.client.circuitbreaker.ConfigBuilder;
import org.springframework.cloud.client.circuitbreaker.ReactiveCircuitBreaker;
import org.springframework.cloud.client.circuitbreaker.ReactiveCircuitBreakerFactory;
import org.springframework.context.ConfigurableApplicationContext;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

/**
 * {@link StaggerReactiveCircuitBreakerFactory}: a {@code Mono} or {@code Flux} run through Spring
 * Cloud's reactive API records into Stagger's breaker, is refused by it when open, and is retried
 * by the id's Stagger retry, one subscription per attempt.
 */
class ReactiveCircuitBreakerTest {
    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(StaggerAutoConfiguration.class, StaggerSpringCloudAutoConfiguration.class))
            .withPropertyValues("stagger.circuit-breakers.pricing.consecutive-failures=1",
                    "stagger.circuit-breakers.catalog.minimum-calls=5", // rate mode: the window counts calls
                    "stagger.retries.inventory.max-attempts=3",
                    "stagger.retries.inventory.backoff.type=none",
                    "stagger.retries.inventory.budget=none");

    private static ReactiveCircuitBreakerFactory<?, ?> factory(ConfigurableApplicationContext context) {
        return context.getBean(ReactiveCircuitBreakerFactory.class);
    }

    private static CircuitBreaker breaker(ConfigurableApplicationContext context, String name) {
        return context.getBean(StaggerRegistry.class).circuitBreaker(name);
    }

    @Test
    void aFailedMonoOpensTheBreakerAndTheNextIsRefusedWithoutBeingSubscribed() {
        runner.run(context -> {
            factory(context).create("pricing").run(Mono.<String>error(new IOException("down")), f -> Mono.just("fallback")).block();
            AtomicInteger subscriptions = new AtomicInteger();

            Object answer = factory(context).create("pricing")
                    .run(Mono.fromCallable(() -> "ran " + subscriptions.incrementAndGet()), f -> Mono.just(f)).block();

            assertThat(breaker(context, "pricing").state()).isEqualTo(CircuitBreaker.State.OPEN);
            assertThat(subscriptions).hasValue(0);
            assertThat(answer).isInstanceOf(CircuitOpenException.class);
        });
    }

    @Test
    void aMonoIsRetriedByTheIdsRetryOneSubscriptionPerAttempt() {
        runner.run(context -> {
            AtomicInteger subscriptions = new AtomicInteger();
            Mono<String> flaky = Mono.fromCallable(() -> {
                if (subscriptions.incrementAndGet() < 3) {
                    throw new IllegalStateException("not yet");
                }
                return "in stock";
            });

            String answer = factory(context).create("inventory").run(flaky, f -> Mono.just("fallback")).block();

            assertThat(answer).isEqualTo("in stock");
            assertThat(subscriptions).hasValue(3);
        });
    }

    @Test
    void aFluxPassesItsElementsOnAndItsCompletionCountsAsASuccess() {
        runner.run(context -> {
            List<Integer> answer = factory(context).create("catalog")
                    .run(Flux.just(1, 2, 3), f -> Flux.just(-1)).collectList().block();

            assertThat(answer).containsExactly(1, 2, 3);
            assertThat(breaker(context, "catalog").metrics().calls()).isEqualTo(1);
            assertThat(breaker(context, "catalog").metrics().failures()).isZero();
        });
    }

    @Test
    void aFluxThatFailsGoesToTheFallbackAndOpensTheBreaker() {
        runner.run(context -> {
            List<Integer> answer = factory(context).create("pricing")
                    .run(Flux.concat(Flux.just(1), Flux.error(new IOException("down"))), f -> Flux.just(-1)).collectList().block();

            assertThat(answer).containsExactly(1, -1);
            assertThat(breaker(context, "pricing").state()).isEqualTo(CircuitBreaker.State.OPEN);
        });
    }

    @Test
    void aCancelledHalfOpenProbeGivesItsPlaceBack() {
        runner.withBean(VirtualClock.class, VirtualClock::new).run(context -> {
            CircuitBreaker pricing = breaker(context, "pricing");
            pricing.record(pricing.tryAcquirePermission(), null, new IOException("down")); // open
            context.getBean(VirtualClock.class).advance(Duration.ofSeconds(30)); // the default open duration

            Sinks.One<String> never = Sinks.one();
            factory(context).create("pricing").run(never.asMono(), f -> Mono.just("fallback")).subscribe().dispose();

            assertThat(pricing.state()).isEqualTo(CircuitBreaker.State.HALF_OPEN);
            assertThat(pricing.tryAcquirePermission().isGranted()).as("the probe place is free again").isTrue();
        });
    }

    @Test
    void anApplicationsOwnFactoryIsKept() {
        runner.withBean("ownFactory", ReactiveCircuitBreakerFactory.class, OwnFactory::new)
                .run(context -> assertThat(context).getBeans(ReactiveCircuitBreakerFactory.class).containsOnlyKeys("ownFactory"));
    }

    /** Another implementation's factory, as the application defines it. */
    static final class OwnFactory extends ReactiveCircuitBreakerFactory<String, ConfigBuilder<String>> {
        @Override
        public ReactiveCircuitBreaker create(String id) {
            throw new UnsupportedOperationException("not used");
        }

        @Override
        protected ConfigBuilder<String> configBuilder(String id) {
            return () -> id;
        }

        @Override
        public void configureDefault(Function<String, String> defaultConfiguration) {
        }
    }
}
