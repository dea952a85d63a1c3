package dev.stagger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import dev.stagger.CircuitBreaker.State;
import dev.stagger.testing.VirtualClock;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** A Retry asks its breaker before every attempt and stops retrying once the breaker opens. */
class CircuitBreakerInRetryTest {
    private final VirtualClock clock = new VirtualClock();
    private final RecordingListener events = new RecordingListener();
    private final AtomicInteger calls = new AtomicInteger();
    private final List<IOException> failures = new ArrayList<>();

    private Retry retry(CircuitBreaker breaker, int maxAttempts) {
        RetryPolicy policy = RetryPolicy.builder().maxAttempts(maxAttempts).backoff(Backoff.fixed(Duration.ofSeconds(1))).build();
        return Retry.of("guarded", policy).withCircuitBreaker(breaker).withClock(clock).withListener(events);
    }

    private Object alwaysFails() throws IOException {
        calls.incrementAndGet();
        IOException e = new IOException("failure " + calls.get());
        failures.add(e);
        throw e;
    }

    /** Failures of calls made through the breaker by someone else. */
    static void otherCallersFail(CircuitBreaker breaker, int times) {
        for (int i = 0; i < times; i++) {
            catchThrowable(() -> breaker.call(() -> {
                throw new IOException("another caller's failure");
            }));
        }
    }

    @Test
    void onceTheBreakerOpensTheRetryStopsWithoutFurtherWaits() {
        CircuitBreaker breaker = CircuitBreaker.builder("b").consecutiveFailures(2).clock(clock).build();

        Throwable thrown = catchThrowable(() -> retry(breaker, 5).call(this::alwaysFails));

        assertThat(calls).hasValue(2);
        assertThat(clock.sleeps()).as("only the wait before the second attempt").containsExactly(Duration.ofSeconds(1));
        assertThat(thrown).isInstanceOf(CircuitOpenException.class).hasCause(failures.get(1));
        assertThat(events.onlyFinish().reason()).isEqualTo(EndReason.CIRCUIT_OPEN);
        assertThat(events.onlyFinish().attempts()).isEqualTo(2);
        assertThat(events.scheduled).hasSize(1);
    }

    @Test
    void theBreakerIsCheckedBeforeEveryAttempt() {
        CircuitBreaker breaker = CircuitBreaker.builder("b").consecutiveFailures(3).clock(clock).build();
        // Other callers trip the breaker while this call waits for its second attempt.
        Retry retry = retry(breaker, 5).withListener(new RetryListener() {
            @Override
            public void onRetryScheduled(RetryEvent.RetryScheduled event) {
                otherCallersFail(breaker, 3);
            }
        });

        Throwable thrown = catchThrowable(() -> retry.call(this::alwaysFails));

        assertThat(calls).hasValue(1);
        assertThat(thrown).isInstanceOf(CircuitOpenException.class).hasCause(failures.get(0));
        assertThat(events.onlyFinish().reason()).isEqualTo(EndReason.CIRCUIT_OPEN);
        assertThat(events.onlyFinish().attempts()).isEqualTo(1);
    }

    @Test
    void everyAttemptIsRecordedByTheBreaker() throws Exception {
        CircuitBreaker breaker = CircuitBreaker.builder("b").minimumCalls(100).clock(clock).build();

        retry(breaker, 5).call(() -> {
            if (calls.incrementAndGet() < 3) {
                throw new IOException();
            }
            return "ok";
        });

        assertThat(breaker.metrics().calls()).isEqualTo(3);
        assertThat(breaker.metrics().failures()).isEqualTo(2);
    }

    @Test
    void aHalfOpenBreakerLetsTheRetrysProbeThroughAndClosesOnSuccess() throws Exception {
        CircuitBreaker breaker = CircuitBreaker.builder("b").consecutiveFailures(1).openDuration(Duration.ofSeconds(5))
                .clock(clock).build();
        otherCallersFail(breaker, 1);
        clock.advance(Duration.ofSeconds(5));

        String result = retry(breaker, 3).call(() -> "ok");

        assertThat(result).isEqualTo("ok");
        assertThat(breaker.state()).isEqualTo(State.CLOSED);
    }

    @Test
    void theLastAttemptEndsExhaustedEvenIfItTripsTheBreaker() {
        CircuitBreaker breaker = CircuitBreaker.builder("b").consecutiveFailures(3).clock(clock).build();

        Throwable thrown = catchThrowable(() -> retry(breaker, 3).call(this::alwaysFails));

        assertThat(thrown).isSameAs(failures.get(2));
        assertThat(breaker.state()).isEqualTo(State.OPEN);
        assertThat(events.onlyFinish().reason()).isEqualTo(EndReason.EXHAUSTED);
    }

    @Test
    void aRetriedResultIsCarriedByTheRefusal() {
        CircuitBreaker breaker = CircuitBreaker.builder("b").consecutiveFailures(1).clock(clock)
                .failurePredicate((result, failure) -> Integer.valueOf(503).equals(result)).build();
        RetryPolicy policy = RetryPolicy.builder().maxAttempts(3).backoff(Backoff.none())
                .retryOnResult(Integer.class, status -> status == 503).build();

        Throwable thrown = catchThrowable(() -> Retry.of("r", policy).withCircuitBreaker(breaker).withClock(clock)
                .call(() -> 503));

        assertThat(thrown).isInstanceOfSatisfying(CircuitOpenException.class, e -> {
            assertThat(e.lastResult()).isEqualTo(503);
            assertThat(e.getCause()).isNull();
        });
    }

    @Test
    void aThrowingFailurePredicateNeitherReplacesTheOutcomeNorLosesTheEndReason() {
        IllegalStateException predicateBug = new IllegalStateException("predicate bug");
        CircuitBreaker breaker = CircuitBreaker.builder("b").consecutiveFailures(10).clock(clock)
                .failurePredicate((result, failure) -> {
                    throw predicateBug;
                }).build();

        Throwable thrown = catchThrowable(() -> retry(breaker, 3).call(this::alwaysFails));

        assertThat(thrown).isSameAs(failures.get(2));
        assertThat(failures.get(0).getSuppressed()).contains(predicateBug);
        assertThat(events.onlyFinish().reason()).isEqualTo(EndReason.EXHAUSTED);
        assertThat(breaker.metrics().consecutiveFailures()).isEqualTo(3);
    }

    @Test
    void aThrowingFailurePredicateLeavesAResultToTheCaller() throws Exception {
        CircuitBreaker breaker = CircuitBreaker.builder("b").consecutiveFailures(10).clock(clock)
                .failurePredicate((result, failure) -> {
                    throw new IllegalStateException("predicate bug");
                }).build();

        String result = retry(breaker, 3).call(() -> "ok");

        assertThat(result).isEqualTo("ok");
        assertThat(events.onlyFinish().reason()).isEqualTo(EndReason.SUCCESS);
    }
}
