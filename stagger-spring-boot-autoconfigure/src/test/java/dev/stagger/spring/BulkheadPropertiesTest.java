package dev.stagger.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import dev.stagger.Bulkhead;
import dev.stagger.BulkheadFullException;
import dev.stagger.EndReason;
import dev.stagger.testing.VirtualClock;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/** Named bulkheads under {@code stagger.bulkheads.*}, bound to retries by property and by annotation. */
class BulkheadPropertiesTest {
    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(StaggerAutoConfiguration.class))
            .withBean(VirtualClock.class, VirtualClock::new);
    private final ApplicationContextRunner annotated = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(StaggerAutoConfiguration.class))
            .withUserConfiguration(Beans.class);

    @Configuration(proxyBeanMethods = false)
    static class Beans {
        @Bean
        VirtualClock clock() {
            return new VirtualClock();
        }

        @Bean
        Inventory inventory() {
            return new Inventory();
        }
    }

    /** Calls that stay in flight until the test completes them. */
    static class Inventory {
        final AtomicInteger calls = new AtomicInteger();
        final CompletableFuture<String> answer = new CompletableFuture<>();

        public int calls() {
            return calls.get();
        }

        public void answer(String value) {
            answer.complete(value);
        }

        @StaggerRetry(name = "stock", bulkhead = "warehouse")
        public CompletionStage<String> stock() {
            calls.incrementAndGet();
            return answer;
        }

        @StaggerRetry(name = "stock", bulkhead = "warehouse")
        public String reserve() {
            calls.incrementAndGet();
            return "reserved";
        }
    }

    @Test
    void aRetryNamingABulkheadSharesItAndInheritsTheDefaultEntry() {
        runner.withPropertyValues("stagger.bulkheads.default.max-wait=20ms", "stagger.bulkheads.warehouse.max-concurrent=3",
                        "stagger.retries.orders.bulkhead=warehouse", "stagger.retries.returns.bulkhead=warehouse")
                .run(context -> {
                    StaggerRegistry registry = context.getBean(StaggerRegistry.class);
                    Bulkhead bulkhead = registry.bulkhead("warehouse");
                    assertThat(bulkhead.maxConcurrent()).isEqualTo(3);
                    assertThat(bulkhead.maxWait()).isEqualTo(Duration.ofMillis(20));
                    assertThat(bulkhead.clock()).isSameAs(context.getBean(VirtualClock.class));
                    assertThat(registry.retry("orders").bulkhead()).containsSame(bulkhead);
                    assertThat(registry.retry("returns").bulkhead()).containsSame(bulkhead);
                    assertThat(registry.bulkheads()).containsOnlyKeys("warehouse");
                });
    }

    @Test
    void aRetryGetsTheBulkheadOfItsOwnName() {
        runner.withPropertyValues("stagger.bulkheads.orders.latency-threshold=250ms")
                .run(context -> {
                    Bulkhead bulkhead = context.getBean(StaggerRegistry.class).retry("orders").bulkhead().orElseThrow();
                    assertThat(bulkhead.name()).isEqualTo("orders");
                    assertThat(bulkhead.isAdaptive()).isTrue();
                });
    }

    @Test
    void theAnnotationsBulkheadRefusesCallsBeyondItsLimitAndFreesThePermitWhenTheCallEnds() {
        annotated.withPropertyValues("stagger.bulkheads.warehouse.max-concurrent=1", "stagger.retries.stock.max-attempts=2")
                .run(context -> {
                    Inventory inventory = context.getBean(Inventory.class);
                    CompletionStage<String> first = inventory.stock(); // holds the only permit

                    Throwable refused = catchThrowable(inventory::reserve);

                    assertThat(refused).isInstanceOf(BulkheadFullException.class);
                    assertThat(((BulkheadFullException) refused).reason()).isEqualTo(EndReason.BULKHEAD_FULL);
                    assertThat(inventory.calls()).isEqualTo(1);
                    inventory.answer("in stock");
                    assertThat(first.toCompletableFuture().join()).isEqualTo("in stock");
                    assertThat(inventory.reserve()).isEqualTo("reserved");
                });
    }

    @Test
    void anAnnotationNamingNoConfiguredBulkheadFailsStartupNamingTheClosest() {
        annotated.withPropertyValues("stagger.bulkheads.warehous.max-concurrent=1", "stagger.retries.stock.max-attempts=2")
                .run(context -> assertThat(context).hasFailed().getFailure().rootCause()
                        .hasMessageContaining("@StaggerRetry(bulkhead = \"warehouse\")")
                        .hasMessageContaining("closest: 'warehous'"));
    }

    @Test
    void aHedgedRetryNamingABulkheadFailsStartupNamingTheProperty() {
        runner.withPropertyValues("stagger.bulkheads.warehouse.max-concurrent=1", "stagger.hedges.fast.delay=40ms",
                        "stagger.retries.orders.hedge=fast", "stagger.retries.orders.bulkhead=warehouse")
                .run(context -> assertThat(context).hasFailed().getFailure().rootCause()
                        .hasMessageContaining("stagger.retries.orders.bulkhead").hasMessageContaining("hedged"));
    }

    @Test
    void aRetrysBulkheadIsMeteredAndListedByTheActuatorEndpoint() {
        new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(StaggerAutoConfiguration.class,
                        StaggerObservabilityAutoConfiguration.class, StaggerActuatorAutoConfiguration.class))
                .withBean(MeterRegistry.class, SimpleMeterRegistry::new)
                .withPropertyValues("stagger.bulkheads.search.max-concurrent=4", "stagger.retries.search.max-attempts=2",
                        "management.endpoints.web.exposure.include=stagger")
                .run(context -> {
                    MeterRegistry registry = context.getBean(MeterRegistry.class);
                    assertThat(registry.get("stagger.bulkhead.limit").tag("name", "search").gauge().value()).isEqualTo(4.0);
                    assertThat(registry.find("stagger.bulkhead.refusals").tag("name", "search").functionCounter()).isNotNull();
                    Map<String, Object> instances = context.getBean(StaggerEndpoint.class).instances();
                    assertThat(instances.get("bulkheads")).isEqualTo(Map.of("search", Map.of("limit", 4, "maxConcurrent", 4,
                            "adaptive", false, "inFlight", 0, "waiting", 0, "refusals", 0L)));
                    @SuppressWarnings("unchecked")
                    Map<String, Object> retry = (Map<String, Object>) ((Map<String, Object>) instances.get("retries")).get("search");
                    assertThat(retry).containsEntry("bulkhead", "search");
                });
    }
}
