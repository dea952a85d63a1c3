package dev.stagger.spring;

import dev.stagger.testsupport.Await;
import static org.assertj.core.api.Assertions.assertThat;

import dev.stagger.observability.CallerContext;
import dev.stagger.testing.VirtualClock;
import io.micrometer.context.ContextRegistry;
import io.micrometer.context.ContextSnapshotFactory;
import io.micrometer.context.integration.Slf4jThreadLocalAccessor;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.SpanData;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.slf4j.MDC;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/**
 * A hedged {@code @StaggerRetry} method's hedge runs on a hedge thread in its caller's context: the
 * tracing Boot configures (Micrometer Tracing over OpenTelemetry, spans exported to memory) and the
 * MDC. The hedge delay passes on a virtual clock.
 */
class HedgeCallerContextTest {
    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(TestAutoConfigurations.TRACING))
            .withConfiguration(AutoConfigurations.of(StaggerObservabilityAutoConfiguration.class, StaggerAutoConfiguration.class))
            .withBean(InMemorySpanExporter.class, InMemorySpanExporter::create)
            .withBean(Catalog.class)
            .withBean(VirtualClock.class, VirtualClock::new)
            .withPropertyValues("management.tracing.sampling.probability=1.0",
                    "stagger.hedges.fast.delay=50ms", "stagger.retries.catalog.max-attempts=2");

    /** The first call is held until its hedge wins and interrupts it; the hedge opens a span and reads the MDC. */
    static class Catalog {
        final ObservationRegistry observations;
        final AtomicInteger calls = new AtomicInteger();
        final CountDownLatch firstStarted = new CountDownLatch(1);
        final AtomicReference<String> hedgeThread = new AtomicReference<>();
        final AtomicReference<String> hedgeMdc = new AtomicReference<>();

        Catalog(ObservationRegistry observations) {
            this.observations = observations;
        }

        // read through the proxy: its own fields are not the bean's
        public ObservationRegistry observations() {
            return observations;
        }

        public CountDownLatch firstStarted() {
            return firstStarted;
        }

        public String hedgeThread() {
            return hedgeThread.get();
        }

        public String hedgeMdc() {
            return hedgeMdc.get();
        }

        @StaggerRetry(value = "catalog", hedge = "fast")
        public String read() throws InterruptedException {
            if (calls.incrementAndGet() == 1) {
                firstStarted.countDown();
                new CountDownLatch(1).await(); // ended by the interrupt of the hedge's win
                return "slow";
            }
            hedgeThread.set(Thread.currentThread().getName());
            hedgeMdc.set(MDC.get("request_id"));
            Observation.createNotStarted("inventory lookup", observations).observe(() -> { });
            return "hedge";
        }
    }

    /** Calls {@code catalog.read()} on a thread of its own, inside an observation and with an MDC entry; lets the hedge go. */
    private static String readInsideRequest(AssertableApplicationContext context) throws Exception {
        Catalog catalog = context.getBean(Catalog.class);
        VirtualClock clock = context.getBean(VirtualClock.class);
        CompletableFuture<String> answer = new CompletableFuture<>();
        Thread caller = new Thread(() -> {
            MDC.put("request_id", "r-7");
            Observation.createNotStarted("request", catalog.observations()).observe(() -> {
                try {
                    answer.complete(catalog.read());
                } catch (Exception | AssertionError e) {
                    answer.completeExceptionally(e);
                }
            });
        }, "caller");
        caller.start();
        assertThat(catalog.firstStarted().await(10, TimeUnit.SECONDS)).isTrue();
        Await.until(() -> clock.pendingTasks() == 1); // the hedge, armed
        clock.advance(Duration.ofMillis(50));
        String value = answer.get(10, TimeUnit.SECONDS);
        caller.join(TimeUnit.SECONDS.toMillis(10));
        return value;
    }

    private static SpanData span(AssertableApplicationContext context, String name) {
        context.getBean(SdkTracerProvider.class).forceFlush().join(10, TimeUnit.SECONDS);
        List<SpanData> spans = context.getBean(InMemorySpanExporter.class).getFinishedSpanItems();
        return spans.stream().filter(s -> s.getName().equals(name)).findFirst()
                .orElseThrow(() -> new AssertionError("no span " + name + " in " + spans.stream().map(SpanData::getName).toList()));
    }

    @Test
    void aSpanOpenedInsideAHedgedMethodsHedgeIsTheHedgeAttemptsChildInTheCallersTrace() throws Exception {
        runner.run(context -> {
            assertThat(readInsideRequest(context)).isEqualTo("hedge");

            Catalog catalog = context.getBean(Catalog.class);
            assertThat(catalog.hedgeThread()).startsWith("stagger-hedge-");
            SpanData inner = span(context, "inventory lookup");
            assertThat(inner.getParentSpanId()).isEqualTo(span(context, "catalog hedge 2").getSpanId());
            assertThat(inner.getTraceId()).isEqualTo(span(context, "request").getTraceId());
        });
    }

    @Test
    void aCallerContextBeanChoosesWhatTheHedgeGetsSuchAsTheMdc() throws Exception {
        ContextRegistry withMdc = new ContextRegistry().loadThreadLocalAccessors()
                .registerThreadLocalAccessor(new Slf4jThreadLocalAccessor("request_id"));
        runner.withBean(CallerContext.class, () -> CallerContext.of(ContextSnapshotFactory.builder().contextRegistry(withMdc).build()))
                .run(context -> {
                    assertThat(readInsideRequest(context)).isEqualTo("hedge");

                    assertThat(context.getBean(Catalog.class).hedgeMdc()).isEqualTo("r-7");
                    assertThat(span(context, "inventory lookup").getParentSpanId())
                            .isEqualTo(span(context, "catalog hedge 2").getSpanId());
                });
    }

    @Test
    void withTheSwitchOffTheHedgeHasNoneOfTheCallersMdc() throws Exception {
        ContextRegistry withMdc = new ContextRegistry().registerThreadLocalAccessor(new Slf4jThreadLocalAccessor("request_id"));
        runner.withBean(CallerContext.class, () -> CallerContext.of(ContextSnapshotFactory.builder().contextRegistry(withMdc).build()))
                .withPropertyValues("stagger.context-propagation.enabled=false")
                .run(context -> {
                    assertThat(readInsideRequest(context)).isEqualTo("hedge");

                    assertThat(context.getBean(Catalog.class).hedgeMdc()).isNull();
                });
    }
}
