package dev.stagger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import dev.stagger.testing.VirtualClock;
import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Every call ends with exactly one {@link EndReason}, reported once in a CallFinished event. */
class EndReasonTest {
    private final VirtualClock clock = new VirtualClock();
    private final RecordingListener events = new RecordingListener();
    private final AtomicInteger calls = new AtomicInteger();

    @AfterEach
    void clearInterruptStatus() {
        Thread.interrupted();
    }

    private Retry retry(RetryPolicy.Builder policy) {
        return Retry.of("reasons", policy.build()).withClock(clock).withListener(events)
                .withRandom(RandomSource.sequence(0.5));
    }

    private static RetryPolicy.Builder fixed(int maxAttempts) {
        return RetryPolicy.builder().maxAttempts(maxAttempts).backoff(Backoff.fixed(Duration.ofSeconds(1)));
    }

    private Object failTimes(int failures) throws IOException {
        if (calls.incrementAndGet() <= failures) {
            throw new IOException("failure " + calls.get());
        }
        return "ok";
    }

    @Test
    void aFirstAttemptThatSucceedsEndsWithSuccess() throws Exception {
        retry(fixed(3)).call(() -> failTimes(0));

        assertThat(events.onlyFinish().reason()).isEqualTo(EndReason.SUCCESS);
        assertThat(events.onlyFinish().attempts()).isEqualTo(1);
        assertThat(events.onlyFinish().result()).isEqualTo("ok");
        assertThat(events.onlyFinish().failure()).isNull();
    }

    @Test
    void aSuccessAfterRetriesEndsRecovered() throws Exception {
        retry(fixed(3)).call(() -> failTimes(2));

        assertThat(events.onlyFinish().reason()).isEqualTo(EndReason.RECOVERED);
        assertThat(events.onlyFinish().attempts()).isEqualTo(3);
        assertThat(events.onlyFinish().elapsed()).isEqualTo(Duration.ofSeconds(2));
    }

    @Test
    void runningOutOfAttemptsEndsExhaustedWithTheFailureTheCallerGets() {
        Throwable thrown = catchThrowable(() -> retry(fixed(3)).call(() -> failTimes(99)));

        assertThat(events.onlyFinish().reason()).isEqualTo(EndReason.EXHAUSTED);
        assertThat(events.onlyFinish().attempts()).isEqualTo(3);
        assertThat(events.onlyFinish().maxAttempts()).isEqualTo(3);
        assertThat(events.onlyFinish().failure()).isSameAs(thrown);
    }

    @Test
    void aFailureTheClassifierStopsEndsNotRetryable() {
        catchThrowable(() -> retry(fixed(3).abortOn(IOException.class)).call(() -> failTimes(99)));

        assertThat(events.onlyFinish().reason()).isEqualTo(EndReason.NOT_RETRYABLE);
        assertThat(events.onlyFinish().attempts()).isEqualTo(1);
    }

    @Test
    void aResultTheClassifierStopsIsReturnedAndEndsNotRetryable() throws Exception {
        Object result = retry(fixed(3).classifier((r, f, c) -> "400".equals(r) ? Decision.stop() : Decision.accept()))
                .call(() -> "400");

        assertThat(result).isEqualTo("400");
        assertThat(events.onlyFinish().reason()).isEqualTo(EndReason.NOT_RETRYABLE);
    }

    @Test
    void aWaitPastTheDeadlineEndsWithDeadline() {
        catchThrowable(() -> retry(fixed(10).deadline(Duration.ofMillis(2500))).call(() -> failTimes(99)));

        assertThat(events.onlyFinish().reason()).isEqualTo(EndReason.DEADLINE);
        assertThat(events.onlyFinish().attempts()).isEqualTo(3);
    }

    @Test
    void aRetryTheBudgetRefusesEndsWithBudget() {
        RetryBudget empty = RetryBudget.builder("empty").maxTokens(1).minRetriesPerSecond(0).clock(clock).build();
        empty.tryAcquireRetry(); // spend the only token

        Throwable thrown = catchThrowable(() -> retry(fixed(3)).withBudget(empty).call(() -> failTimes(99)));

        assertThat(thrown).isInstanceOf(BudgetExhaustedException.class);
        assertThat(events.onlyFinish().reason()).isEqualTo(EndReason.BUDGET);
        assertThat(events.onlyFinish().failure()).isSameAs(thrown);
        assertThat(events.onlyFinish().attempts()).isEqualTo(1);
    }

    @Test
    void anOpenBreakerBeforeTheFirstAttemptEndsCircuitOpenWithZeroAttempts() {
        CircuitBreaker breaker = CircuitBreaker.builder("down").consecutiveFailures(1).clock(clock).build();
        CircuitBreakerInRetryTest.otherCallersFail(breaker, 1);

        Throwable thrown = catchThrowable(() -> retry(fixed(3)).withCircuitBreaker(breaker).call(() -> failTimes(0)));

        assertThat(thrown).isInstanceOf(CircuitOpenException.class);
        assertThat(calls).hasValue(0);
        assertThat(events.onlyFinish().reason()).isEqualTo(EndReason.CIRCUIT_OPEN);
        assertThat(events.onlyFinish().attempts()).isZero();
    }

    @Test
    void anInterruptedWaitEndsInterrupted() {
        catchThrowable(() -> retry(fixed(3)).call(() -> {
            calls.incrementAndGet();
            Thread.currentThread().interrupt(); // the wait after this failure is interrupted
            throw new IOException("down");
        }));

        assertThat(events.onlyFinish().reason()).isEqualTo(EndReason.INTERRUPTED);
        assertThat(calls).hasValue(1);
        assertThat(clock.sleeps()).isEmpty();
    }

    @Test
    void cancellingTheFutureEndsCancelled() {
        CompletableFuture<Object> future = retry(fixed(3)).callAsync(() -> CompletableFuture.failedFuture(new IOException()));

        future.cancel(true);
        clock.runUntilIdle();

        assertThat(events.onlyFinish().reason()).isEqualTo(EndReason.CANCELLED);
        assertThat(events.onlyFinish().attempts()).isEqualTo(1);
    }

    @Test
    void cancellingAnAlreadyFinishedCallReportsNothingMore() {
        CompletableFuture<Object> future = retry(fixed(3)).callAsync(() -> CompletableFuture.completedFuture("done"));

        future.cancel(true);

        assertThat(future).isCompletedWithValue("done");
        assertThat(events.onlyFinish().reason()).isEqualTo(EndReason.SUCCESS);
    }

    @Test
    void everyAttemptIsReportedWithItsNumberFailureAndDecision() {
        catchThrowable(() -> retry(fixed(3)).call(() -> failTimes(99)));

        assertThat(events.attempts).extracting(RetryEvent.AttemptFinished::attempt).containsExactly(1, 2, 3);
        assertThat(events.attempts).allSatisfy(e -> {
            assertThat(e.failed()).isTrue();
            assertThat(e.failure()).isInstanceOf(IOException.class);
            assertThat(e.decision()).isEqualTo(Decision.retry());
            assertThat(e.maxAttempts()).isEqualTo(3);
        });
    }

    @Test
    void everyScheduledRetryIsReportedWithTheNextAttemptDelayDecisionAndCause() {
        catchThrowable(() -> retry(fixed(3)).call(() -> failTimes(99)));

        assertThat(events.scheduled).hasSize(2);
        RetryEvent.RetryScheduled first = events.scheduled.get(0);
        assertThat(first.nextAttempt()).isEqualTo(2);
        assertThat(first.delay()).isEqualTo(Duration.ofSeconds(1));
        assertThat(first.decision()).isEqualTo(Decision.retry());
        assertThat(first.cause()).hasMessage("failure 1");
        assertThat(events.scheduled.get(1).nextAttempt()).isEqualTo(3);
    }

    @Test
    void theFailureInCallFinishedAlreadyCarriesTheEarlierFailuresAsSuppressed() {
        RecordingListener seenAtTheTime = new RecordingListener() {
            @Override
            public void onCallFinished(RetryEvent.CallFinished event) {
                assertThat(event.failure().getSuppressed()).extracting(Throwable::getMessage)
                        .containsExactly("failure 1", "failure 2");
                super.onCallFinished(event);
            }
        };

        Throwable thrown = catchThrowable(() -> retry(fixed(3)).withListener(seenAtTheTime).call(() -> failTimes(99)));

        assertThat(seenAtTheTime.onlyFinish().failure()).isSameAs(thrown);
        assertThat(thrown.getSuppressed()).hasSize(2);
    }
}
