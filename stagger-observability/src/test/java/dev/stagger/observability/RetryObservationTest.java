package dev.stagger.observability;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import dev.stagger.Backoff;
import dev.stagger.CircuitBreaker;
import dev.stagger.CircuitOpenException;
import dev.stagger.HedgePolicy;
import dev.stagger.Retry;
import dev.stagger.RetryPolicy;
import dev.stagger.testing.VirtualClock;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.data.EventData;
import io.opentelemetry.sdk.trace.data.SpanData;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * {@link RetryObservation} with a real tracer: Micrometer Tracing's OpenTelemetry bridge over the
 * OpenTelemetry SDK, spans exported to memory. Waits run on a virtual clock.
 */
class RetryObservationTest {
    private final InMemoryTracing tracing = new InMemoryTracing();
    private final InMemorySpanExporter exporter = tracing.exporter;
    private final ObservationRegistry registry = tracing.registry;
    private final VirtualClock clock = new VirtualClock();
    private final AtomicInteger calls = new AtomicInteger();

    @AfterEach
    void close() {
        tracing.close();
    }

    private Retry retry(int maxAttempts) {
        return RetryObservation.of(registry).instrument(Retry.of("payments",
                RetryPolicy.builder().maxAttempts(maxAttempts).backoff(Backoff.fixed(Duration.ofSeconds(1))).build())
                .withClock(clock));
    }

    private static String attr(SpanData span, String key) {
        return InMemoryTracing.attr(span, key);
    }

    private SpanData only(String name) {
        List<SpanData> found = exporter.getFinishedSpanItems().stream().filter(s -> s.getName().equals(name)).toList();
        assertThat(found).as(name).hasSize(1);
        return found.get(0);
    }

    private List<SpanData> attempts() {
        List<SpanData> found = new ArrayList<>(exporter.getFinishedSpanItems().stream()
                .filter(s -> attr(s, RetryObservation.ATTEMPT_NUMBER) != null && s.getName().startsWith("payments attempt"))
                .toList());
        found.sort((a, b) -> attr(a, RetryObservation.ATTEMPT_NUMBER).compareTo(attr(b, RetryObservation.ATTEMPT_NUMBER)));
        return found;
    }

    /** Asserts the spans a call retried twice before succeeding leaves, whatever the way it was made. */
    private void assertRecoveredOnThirdAttempt(List<String> spanIdsSeenInside) {
        SpanData call = only("retry payments");
        assertThat(attr(call, RetryObservation.NAME)).isEqualTo("payments");
        assertThat(attr(call, RetryObservation.REASON)).isEqualTo("recovered");
        assertThat(attr(call, RetryObservation.ATTEMPTS)).isEqualTo("3");
        assertThat(attr(call, RetryObservation.FALLBACK)).isEqualTo("none");
        assertThat(call.getStatus().getStatusCode()).isNotEqualTo(StatusCode.ERROR);
        assertThat(call.getEvents()).extracting(EventData::getName)
                .containsExactly("wait PT1S before attempt 2", "wait PT1S before attempt 3");

        List<SpanData> attempts = attempts();
        assertThat(attempts).hasSize(3);
        for (int i = 0; i < 3; i++) {
            SpanData a = attempts.get(i);
            assertThat(a.getName()).isEqualTo("payments attempt " + (i + 1));
            assertThat(a.getParentSpanId()).as("child of the call").isEqualTo(call.getSpanId());
            assertThat(a.getTraceId()).isEqualTo(call.getTraceId());
            assertThat(attr(a, RetryObservation.ATTEMPT_NUMBER)).isEqualTo(Integer.toString(i + 1));
            assertThat(attr(a, RetryObservation.PREVIOUS_ATTEMPTS)).isEqualTo(Integer.toString(i));
            assertThat(attr(a, RetryObservation.CLASSIFIED)).isEqualTo(i < 2 ? "retry" : "accept");
            assertThat(attr(a, RetryObservation.DECISION)).isEqualTo(i < 2 ? "retry" : "recovered");
            if (i < 2) {
                assertThat(a.getStatus().getStatusCode()).isEqualTo(StatusCode.ERROR);
                assertThat(a.getEvents()).extracting(EventData::getName).contains("exception");
            } else {
                assertThat(a.getStatus().getStatusCode()).isNotEqualTo(StatusCode.ERROR);
            }
        }
        assertThat(spanIdsSeenInside).as("each attempt ran with its own span current")
                .containsExactly(attempts.get(0).getSpanId(), attempts.get(1).getSpanId(), attempts.get(2).getSpanId());
    }

    @Test
    void aSyncCallRetriedTwiceIsOneSpanWithThreeAttemptChildren() throws Exception {
        List<String> inside = new ArrayList<>();

        String result = retry(3).call(() -> {
            inside.add(Span.current().getSpanContext().getSpanId());
            if (calls.incrementAndGet() < 3) {
                throw new IOException("down");
            }
            return "ok";
        });

        assertThat(result).isEqualTo("ok");
        assertThat(clock.sleeps()).containsExactly(Duration.ofSeconds(1), Duration.ofSeconds(1));
        assertRecoveredOnThirdAttempt(inside);
    }

    @Test
    void anAsyncCallRetriedTwiceIsOneSpanWithThreeAttemptChildren() {
        List<String> inside = new ArrayList<>();

        CompletableFuture<String> future = retry(3).callAsync(() -> {
            inside.add(Span.current().getSpanContext().getSpanId());
            return calls.incrementAndGet() < 3 ? CompletableFuture.failedFuture(new IOException("down"))
                    : CompletableFuture.completedFuture("ok");
        });
        clock.advance(Duration.ofSeconds(1));
        clock.advance(Duration.ofSeconds(1));

        assertThat(future).isCompletedWithValue("ok");
        assertRecoveredOnThirdAttempt(inside);
    }

    @Test
    void insideTheCallersSpanTheAttemptsAreStillChildrenOfTheCall() throws Exception {
        List<String> inside = new ArrayList<>();
        Observation request = Observation.start("request", registry);
        try (Observation.Scope scope = request.openScope()) {
            retry(3).call(() -> {
                inside.add(Span.current().getSpanContext().getSpanId());
                if (calls.incrementAndGet() < 3) {
                    throw new IOException("down");
                }
                return "ok";
            });
        } finally {
            request.stop();
        }

        assertThat(only("retry payments").getParentSpanId()).isEqualTo(only("request").getSpanId());
        assertRecoveredOnThirdAttempt(inside);
    }

    @Test
    void theCallSpanIsAChildOfTheCallersAndAnExhaustedCallIsAnError() {
        Observation request = Observation.start("request", registry);
        try (Observation.Scope scope = request.openScope()) {
            Throwable thrown = catchThrowable(() -> retry(2).call(() -> {
                throw new IOException("down");
            }));
            assertThat(thrown).isInstanceOf(IOException.class);
        } finally {
            request.stop();
        }

        SpanData parent = only("request");
        SpanData call = only("retry payments");
        assertThat(call.getParentSpanId()).isEqualTo(parent.getSpanId());
        assertThat(attr(call, RetryObservation.REASON)).isEqualTo("exhausted");
        assertThat(attr(call, RetryObservation.ATTEMPTS)).isEqualTo("2");
        assertThat(call.getStatus().getStatusCode()).isEqualTo(StatusCode.ERROR);
        assertThat(attempts()).extracting(a -> attr(a, RetryObservation.CLASSIFIED)).containsExactly("retry", "retry");
        assertThat(attempts()).extracting(a -> attr(a, RetryObservation.DECISION)).containsExactly("retry", "exhausted");
    }

    @Test
    void aCallTheBreakerRefusesHasNoAttemptSpan() {
        CircuitBreaker breaker = CircuitBreaker.builder("payments").build();
        breaker.forceOpen();

        Throwable thrown = catchThrowable(() -> retry(3).withCircuitBreaker(breaker).call(() -> "never"));

        assertThat(thrown).isInstanceOf(CircuitOpenException.class);
        SpanData call = only("retry payments");
        assertThat(attr(call, RetryObservation.REASON)).isEqualTo("circuit_open");
        assertThat(attr(call, RetryObservation.ATTEMPTS)).isEqualTo("0");
        assertThat(attempts()).isEmpty();
    }

    @Test
    void aNoopRegistryRecordsNothingAndKeepsTheSharedListener() throws Exception {
        RetryObservation observation = RetryObservation.of(ObservationRegistry.NOOP);
        Retry retry = Retry.of("quiet", RetryPolicy.builder().maxAttempts(2).build()).withListener(observation);

        assertThat(observation.forCall(retry)).isSameAs(observation);
        assertThat(retry.call(() -> "ok")).isEqualTo("ok");
        assertThat(exporter.getFinishedSpanItems()).isEmpty();
    }

    @Test
    void instrumentingWithANoopRegistryOrOneWithoutHandlersLeavesTheRetryAsItWas() {
        Retry bare = Retry.of("quiet", RetryPolicy.builder().maxAttempts(2).build());

        assertThat(RetryObservation.of(ObservationRegistry.NOOP).instrument(bare)).isSameAs(bare);
        assertThat(RetryObservation.of(ObservationRegistry.create()).instrument(bare)).isSameAs(bare);
        assertThat(RetryObservation.of(registry).instrument(bare).listeners()).hasSize(bare.listeners().size() + 1);
    }

    private Retry hedged() {
        return RetryObservation.of(registry).instrument(Retry.of("payments", RetryPolicy.builder().maxAttempts(3)
                .backoff(Backoff.none()).hedge(HedgePolicy.after(Duration.ofMillis(100))).build())
                .withClock(clock).withoutBudget());
    }

    private SpanData attemptNumber(int n) {
        return exporter.getFinishedSpanItems().stream().filter(s -> Integer.toString(n).equals(attr(s, RetryObservation.ATTEMPT_NUMBER)))
                .findFirst().orElseThrow(() -> new AssertionError("no span for attempt " + n));
    }

    @Test
    void aHedgeThatWinsIsAnAttemptChildMarkedAsAHedgeAndTheAttemptItBackedUpIsCancelled() {
        CompletableFuture<String> slow = new CompletableFuture<>();
        List<String> inside = new ArrayList<>();

        CompletableFuture<String> future = hedged().callAsync(() -> {
            inside.add(Span.current().getSpanContext().getSpanId());
            return calls.incrementAndGet() == 1 ? slow : CompletableFuture.completedFuture("hedge");
        });
        clock.advance(Duration.ofMillis(100));

        assertThat(future).isCompletedWithValue("hedge");
        SpanData call = only("retry payments");
        assertThat(attr(call, RetryObservation.REASON)).isEqualTo("recovered");
        assertThat(call.getEvents()).extracting(EventData::getName).containsExactly("hedge attempt 2 after PT0.1S");
        SpanData first = attemptNumber(1);
        SpanData hedge = attemptNumber(2);
        assertThat(first.getName()).isEqualTo("payments attempt 1");
        assertThat(hedge.getName()).isEqualTo("payments hedge 2");
        assertThat(List.of(first, hedge)).allSatisfy(a -> assertThat(a.getParentSpanId()).isEqualTo(call.getSpanId()));
        assertThat(attr(first, RetryObservation.HEDGE)).isEqualTo("false");
        assertThat(attr(first, RetryObservation.HEDGE_OUTCOME)).isEqualTo("cancelled");
        assertThat(attr(hedge, RetryObservation.HEDGE)).isEqualTo("true");
        assertThat(attr(hedge, RetryObservation.HEDGE_OUTCOME)).isEqualTo("won");
        assertThat(attr(hedge, RetryObservation.DECISION)).isEqualTo("recovered");
        assertThat(inside).as("each attempt ran with its own span current")
                .containsExactly(first.getSpanId(), hedge.getSpanId());
    }

    @Test
    void aFirstAttemptThatWinsOverItsHedgeIsMarkedWonAndTheHedgeCancelled() {
        CompletableFuture<String> slow = new CompletableFuture<>();
        CompletableFuture<String> slowerHedge = new CompletableFuture<>();

        CompletableFuture<String> future = hedged().callAsync(() -> calls.incrementAndGet() == 1 ? slow : slowerHedge);
        clock.advance(Duration.ofMillis(100));
        slow.complete("first");

        assertThat(future).isCompletedWithValue("first");
        assertThat(attr(only("retry payments"), RetryObservation.REASON)).isEqualTo("success");
        assertThat(attr(attemptNumber(1), RetryObservation.HEDGE_OUTCOME)).isEqualTo("won");
        assertThat(attr(attemptNumber(2), RetryObservation.HEDGE_OUTCOME)).isEqualTo("cancelled");
        assertThat(slowerHedge).isCancelled();
    }
}
