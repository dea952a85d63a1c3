package dev.stagger.observability;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.stagger.Backoff;
import dev.stagger.HedgePolicy;
import dev.stagger.Retry;
import dev.stagger.RetryPolicy;
import dev.stagger.testing.VirtualClock;
import io.micrometer.context.ContextRegistry;
import io.micrometer.context.ContextSnapshotFactory;
import io.micrometer.context.integration.Slf4jThreadLocalAccessor;
import io.micrometer.observation.Observation;
import io.opentelemetry.sdk.trace.data.SpanData;
import java.time.Duration;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.slf4j.MDC;

/**
 * Hedges run on other threads than their caller's; {@link CallerContext} gives them the caller's
 * context. A real tracer (Micrometer Tracing's OpenTelemetry bridge), the hedge delay on a virtual
 * clock: the first attempt is held until the hedge wins and interrupts it.
 */
class CallerContextTest {
    private final InMemoryTracing tracing = new InMemoryTracing();
    private final VirtualClock clock = new VirtualClock();
    private final AtomicInteger calls = new AtomicInteger();
    private final CountDownLatch firstStarted = new CountDownLatch(1);
    /** A thread per hedge, none of them the caller's. */
    private final Executor hedgeThreads = task -> new Thread(task, "hedge").start();

    @AfterEach
    void close() {
        tracing.close();
    }

    private Retry hedged() {
        return Retry.of("search", RetryPolicy.builder().maxAttempts(2).backoff(Backoff.none())
                .hedge(HedgePolicy.builder().delay(Duration.ofMillis(100)).executor(hedgeThreads).build()).build())
                .withClock(clock).withoutBudget();
    }

    /** The first attempt waits until the winning hedge interrupts it; the hedge runs {@code inHedge}. */
    private <T> Callable<T> firstHeldThenHedge(Callable<T> inHedge) {
        return () -> {
            if (calls.incrementAndGet() == 1) {
                firstStarted.countDown();
                new CountDownLatch(1).await(); // ended by the interrupt of the hedge's win
                throw new AssertionError("the hedge should have won");
            }
            return inHedge.call();
        };
    }

    /** Makes {@code retry}'s call on a thread of its own inside the caller's observation {@code request}, and lets the hedge go. */
    private <T> T callInsideRequest(Retry retry, Callable<T> operation) throws Exception {
        return callInsideRequest(retry, operation, () -> { });
    }

    /** As {@link #callInsideRequest(Retry, Callable)}, the caller's thread running {@code first} before the call. */
    private <T> T callInsideRequest(Retry retry, Callable<T> operation, Runnable first) throws Exception {
        CompletableFuture<T> answer = new CompletableFuture<>();
        Thread caller = new Thread(() -> Observation.createNotStarted("request", tracing.registry).observe(() -> {
            first.run();
            try {
                answer.complete(retry.call(operation));
            } catch (Exception | AssertionError e) {
                answer.completeExceptionally(e);
            }
        }), "caller");
        caller.start();
        assertThat(firstStarted.await(10, TimeUnit.SECONDS)).isTrue();
        clock.advance(Duration.ofMillis(100)); // the hedge is due: sent from this thread's tick, run on a hedge thread
        T value = answer.get(10, TimeUnit.SECONDS);
        caller.join(TimeUnit.SECONDS.toMillis(10)); // the request's span ended
        return value;
    }

    private String innerSpan() {
        Observation.createNotStarted("http", tracing.registry).observe(() -> { });
        return Thread.currentThread().getName();
    }

    private SpanData span(String name) {
        return tracing.named(name).stream().filter(s -> s.getName().equals(name)).findFirst()
                .orElseThrow(() -> new AssertionError("no span " + name + " in " + tracing.named("")));
    }

    @Test
    void aSpanOpenedInsideAHedgeIsTheHedgeAttemptsChildInTheCallersTrace() throws Exception {
        Retry retry = RetryObservation.of(tracing.registry).instrument(CallerContext.of().instrument(hedged()));

        assertThat(callInsideRequest(retry, firstHeldThenHedge(this::innerSpan))).isEqualTo("hedge");

        SpanData request = span("request");
        SpanData hedge = span("search hedge 2");
        SpanData http = span("http");
        assertThat(http.getParentSpanId()).isEqualTo(hedge.getSpanId());
        assertThat(http.getTraceId()).isEqualTo(request.getTraceId());
        assertThat(hedge.getParentSpanId()).isEqualTo(span("retry search").getSpanId());
        assertThat(span("retry search").getParentSpanId()).isEqualTo(request.getSpanId());
    }

    @Test
    void withoutObservedRetriesASpanOpenedInsideAHedgeIsTheCallersChild() throws Exception {
        Retry retry = CallerContext.of().instrument(hedged());

        assertThat(callInsideRequest(retry, firstHeldThenHedge(this::innerSpan))).isEqualTo("hedge");

        SpanData request = span("request");
        assertThat(span("http").getParentSpanId()).isEqualTo(request.getSpanId());
        assertThat(span("http").getTraceId()).isEqualTo(request.getTraceId());
    }

    @Test
    void aHedgeSeesTheCallersMdc() throws Exception {
        ContextRegistry mdc = new ContextRegistry().registerThreadLocalAccessor(new Slf4jThreadLocalAccessor("request_id"));
        Retry retry = CallerContext.of(ContextSnapshotFactory.builder().contextRegistry(mdc).build()).instrument(hedged());
        AtomicReference<String> seen = new AtomicReference<>();

        String answer = callInsideRequest(retry, firstHeldThenHedge(() -> {
            seen.set(MDC.get("request_id"));
            return "hedge";
        }), () -> MDC.put("request_id", "r-42"));

        assertThat(answer).isEqualTo("hedge");
        assertThat(seen).hasValue("r-42");
    }

    @Test
    void anAsyncHedgeStartedFromTheClocksTickRunsInTheCallersContext() throws Exception {
        Retry retry = RetryObservation.of(tracing.registry).instrument(CallerContext.of().instrument(hedged()));
        CompletableFuture<String> slow = new CompletableFuture<>();
        AtomicReference<CompletableFuture<String>> answer = new AtomicReference<>();
        Thread caller = new Thread(() -> Observation.createNotStarted("request", tracing.registry).observe(() ->
                answer.set(retry.callAsync(() -> calls.incrementAndGet() == 1 ? slow
                        : CompletableFuture.completedFuture(innerSpan())))), "caller");
        caller.start();
        caller.join(TimeUnit.SECONDS.toMillis(10));

        clock.advance(Duration.ofMillis(100)); // the hedge's operation is invoked on this thread

        assertThat(answer.get()).isCompletedWithValue(Thread.currentThread().getName());
        assertThat(span("http").getParentSpanId()).isEqualTo(span("search hedge 2").getSpanId());
        assertThat(span("http").getTraceId()).isEqualTo(span("request").getTraceId());
        assertThat(slow).isCancelled();
    }

    @Test
    void anAttemptOnTheCallersThreadIsLeftAsItIs() {
        assertThat(CallerContext.of().forCall(hedged()).onAttemptStarting("search", 1)).isNull();
    }

    @Test
    void instrumentingARetryObservedAlreadyIsRefused() {
        Retry observed = RetryObservation.of(tracing.registry).instrument(hedged());

        assertThatThrownBy(() -> CallerContext.of().instrument(observed))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("retry search is observed already").hasMessageContaining("before RetryObservation");
    }
}
