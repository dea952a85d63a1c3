package dev.stagger.benchmarks;

import dev.stagger.Backoff;
import dev.stagger.Retry;
import dev.stagger.RetryListener;
import dev.stagger.RetryPolicy;
import dev.stagger.observability.RetryObservation;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import io.micrometer.tracing.handler.DefaultTracingObservationHandler;
import io.micrometer.tracing.otel.bridge.OtelCurrentTraceContext;
import io.micrometer.tracing.otel.bridge.OtelTracer;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import java.time.Duration;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;
import org.springframework.core.retry.RetryException;

/**
 * What tracing a retry costs, next to what Spring's own observation costs on the same call.
 *
 * <ul>
 *   <li>{@code happyPath_stagger}: the retry with no listener at all, the path an application that
 *       never attaches {@link RetryObservation} keeps (the anchor the 1 ns / 0 B goal is about).</li>
 *   <li>{@code happyPath_staggerObservationNoop} / {@code ...NoHandler}: {@link RetryObservation}
 *       attached, with {@link ObservationRegistry#NOOP} or with a registry that has no handler (what
 *       an application gets with Micrometer present but tracing off); {@code happyPath_staggerListener}:
 *       a listener that does nothing, to tell the cost of having a listener from the observation's.</li>
 *   <li>{@code *_staggerTraced}: a real tracer, Micrometer Tracing's OpenTelemetry bridge over the
 *       OpenTelemetry SDK, every span exported to memory (cleared after each iteration): a call is
 *       two spans on the happy path (the call, its attempt), four after one failure.</li>
 *   <li>{@code happyPath_springObserved}: the same downstream call in
 *       {@code Observation.createNotStarted(..).observe(..)} on the same traced registry, what
 *       Spring's {@code @Observed} does; {@code happyPath_spring7RetryObserved}: Spring Framework 7's
 *       {@code RetryTemplate} inside such an observation (Spring 7's retry has no observation of
 *       its own, so an observed {@code @Retryable} method is this).</li>
 * </ul>
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = {"-Xms1g", "-Xmx1g", "-XX:+UseG1GC", "-XX:+AlwaysPreTouch"})
public class ObservationBenchmark {
    private static final int MAX_ATTEMPTS = 3;

    private Downstream downstream;
    private Retry stagger;
    private Retry staggerListener;
    private Retry staggerObservationNoop;
    private Retry staggerObservationNoHandler;
    private Retry staggerTraced;
    private InMemorySpanExporter exporter;
    private SdkTracerProvider provider;
    private ObservationRegistry traced;
    private org.springframework.core.retry.RetryTemplate spring7;

    @Setup
    public void setUp() {
        downstream = new Downstream();
        // no budget: oneFailure retries every call, which a budget would (rightly) refuse once its tokens run out
        stagger = Retry.of("bench", RetryPolicy.builder().maxAttempts(MAX_ATTEMPTS).backoff(Backoff.none()).build())
                .withoutBudget();
        staggerListener = stagger.withListener(new RetryListener() {
        });
        staggerObservationNoop = RetryObservation.of(ObservationRegistry.NOOP).instrument(stagger);
        staggerObservationNoHandler = RetryObservation.of(ObservationRegistry.create()).instrument(stagger);

        exporter = InMemorySpanExporter.create();
        provider = SdkTracerProvider.builder().addSpanProcessor(SimpleSpanProcessor.create(exporter)).build();
        OtelTracer tracer = new OtelTracer(provider.get("bench"), new OtelCurrentTraceContext(), event -> { });
        traced = ObservationRegistry.create();
        traced.observationConfig().observationHandler(new DefaultTracingObservationHandler(tracer));
        staggerTraced = RetryObservation.of(traced).instrument(stagger);

        spring7 = new org.springframework.core.retry.RetryTemplate(org.springframework.core.retry.RetryPolicy.builder()
                .maxRetries(MAX_ATTEMPTS - 1).delay(Duration.ZERO).build());

        checkTheTracerRecords();
    }

    /** Fails the run, rather than measuring nothing, if the traced retry records no spans. */
    private void checkTheTracerRecords() {
        downstream.failOnce();
        try {
            staggerTraced.call((Callable<Object>) downstream);
        } catch (Exception e) {
            throw new IllegalStateException("the traced retry did not recover from one failure", e);
        }
        if (exporter.getFinishedSpanItems().size() != 3) { // the call and its two attempts
            throw new IllegalStateException("expected 3 spans, got " + exporter.getFinishedSpanItems());
        }
        exporter.reset();
    }

    @TearDown(Level.Iteration)
    public void dropSpans() {
        exporter.reset();
    }

    @TearDown
    public void close() {
        provider.close();
    }

    // ---- first attempt succeeds ----

    @Benchmark
    public Object happyPath_direct() {
        return downstream.call();
    }

    @Benchmark
    public Object happyPath_stagger() throws Exception {
        return stagger.call((Callable<Object>) downstream);
    }

    @Benchmark
    public Object happyPath_staggerListener() throws Exception {
        return staggerListener.call((Callable<Object>) downstream);
    }

    @Benchmark
    public Object happyPath_staggerObservationNoop() throws Exception {
        return staggerObservationNoop.call((Callable<Object>) downstream);
    }

    @Benchmark
    public Object happyPath_staggerObservationNoHandler() throws Exception {
        return staggerObservationNoHandler.call((Callable<Object>) downstream);
    }

    @Benchmark
    public Object happyPath_staggerTraced() throws Exception {
        return staggerTraced.call((Callable<Object>) downstream);
    }

    @Benchmark
    public Object happyPath_springObserved() {
        return Observation.createNotStarted("bench", traced).observe(downstream::call);
    }

    @Benchmark
    public Object happyPath_spring7RetryObserved() {
        return Observation.createNotStarted("bench", traced).observe(() -> {
            try {
                return spring7.execute(downstream);
            } catch (RetryException e) {
                throw new IllegalStateException(e);
            }
        });
    }

    // ---- first attempt fails, the second succeeds: the cost of one more attempt ----

    @Benchmark
    public Object oneFailure_stagger() throws Exception {
        downstream.failOnce();
        return stagger.call((Callable<Object>) downstream);
    }

    @Benchmark
    public Object oneFailure_staggerTraced() throws Exception {
        downstream.failOnce();
        return staggerTraced.call((Callable<Object>) downstream);
    }
}
