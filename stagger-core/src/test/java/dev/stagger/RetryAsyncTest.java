package dev.stagger;

import static org.assertj.core.api.Assertions.assertThat;

import dev.stagger.testing.VirtualClock;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/** {@link Retry#callAsync}: waits are scheduled, never slept; cancellation and attempt timeouts. */
class RetryAsyncTest {
    private final VirtualClock clock = new VirtualClock();
    private final RecordingListener events = new RecordingListener();
    private final AtomicInteger calls = new AtomicInteger();

    private Retry retry(RetryPolicy.Builder policy) {
        return Retry.of("async", policy.build()).withClock(clock).withListener(events).withRandom(RandomSource.sequence(0.5));
    }

    private static RetryPolicy.Builder fixed(int maxAttempts) {
        return RetryPolicy.builder().maxAttempts(maxAttempts).backoff(Backoff.fixed(Duration.ofSeconds(1)));
    }

    private CompletableFuture<String> failTimes(int failures) {
        return calls.incrementAndGet() <= failures
                ? CompletableFuture.failedFuture(new IOException("failure " + calls.get()))
                : CompletableFuture.completedFuture("ok");
    }

    @Test
    void waitsAreScheduledOnTheClockInsteadOfBlockingTheCaller() {
        CompletableFuture<String> future = retry(fixed(3)).callAsync(() -> failTimes(2));

        assertThat(future).isNotDone();
        assertThat(calls).hasValue(1);
        assertThat(clock.pendingTasks()).isEqualTo(1);

        clock.advance(Duration.ofSeconds(1));
        assertThat(calls).hasValue(2);
        assertThat(future).isNotDone();

        clock.advance(Duration.ofSeconds(1));
        assertThat(future).isCompletedWithValue("ok");
        assertThat(clock.sleeps()).as("no thread ever slept").isEmpty();
        assertThat(events.onlyFinish().reason()).isEqualTo(EndReason.RECOVERED);
    }

    @Test
    void anAttemptDoesNotStartBeforeItsWaitHasPassed() {
        retry(fixed(3)).callAsync(() -> failTimes(2));

        clock.advance(Duration.ofMillis(999));

        assertThat(calls).hasValue(1);
    }

    @Test
    void givingUpFailsTheFutureWithTheLastFailureAndEarlierOnesSuppressed() {
        CompletableFuture<String> future = retry(fixed(3)).callAsync(() -> failTimes(99));
        clock.runUntilIdle();

        assertThat(future).isCompletedExceptionally();
        Throwable failure = future.handle((v, t) -> t).join();
        assertThat(failure).isInstanceOf(IOException.class).hasMessage("failure 3");
        assertThat(failure.getSuppressed()).extracting(Throwable::getMessage).containsExactly("failure 1", "failure 2");
    }

    @Test
    void cancellingDuringAWaitStopsFurtherAttempts() {
        CompletableFuture<String> future = retry(fixed(5)).callAsync(() -> failTimes(99));

        future.cancel(true);
        clock.runUntilIdle();

        assertThat(future).isCancelled();
        assertThat(calls).hasValue(1);
        assertThat(clock.pendingTasks()).isZero();
        assertThat(events.onlyFinish().reason()).isEqualTo(EndReason.CANCELLED);
    }

    @Test
    void aCancelledCallReportsTheCancellationTheCallerSeesNotTheAttemptsFailure() {
        CompletableFuture<String> future = retry(fixed(5)).callAsync(() -> failTimes(99));

        future.cancel(true);

        Throwable seenByCaller = future.handle((v, t) -> t).join();
        assertThat(seenByCaller).isInstanceOf(CancellationException.class);
        assertThat(events.onlyFinish().failure()).isSameAs(seenByCaller);
        assertThat(events.onlyFinish().result()).isNull();
    }

    @Test
    void aCallCompletedByHandReportsTheValueItWasCompletedWith() {
        CompletableFuture<String> future = retry(fixed(5)).callAsync(() -> failTimes(99));

        future.complete("given up by the caller");

        assertThat(events.onlyFinish().result()).isEqualTo("given up by the caller");
        assertThat(events.onlyFinish().failure()).isNull();
    }

    @Test
    void cancellingCancelsTheAttemptInFlightAndStartsNoOther() {
        List<CompletableFuture<String>> stages = new ArrayList<>();
        CompletableFuture<String> future = retry(fixed(5)).callAsync(() -> {
            calls.incrementAndGet();
            CompletableFuture<String> neverCompletes = new CompletableFuture<>();
            stages.add(neverCompletes);
            return neverCompletes;
        });

        future.cancel(true);
        clock.runUntilIdle();

        assertThat(stages).singleElement().satisfies(stage -> assertThat(stage).isCancelled());
        assertThat(calls).hasValue(1);
        assertThat(events.onlyFinish().reason()).isEqualTo(EndReason.CANCELLED);
    }

    @Test
    void anAttemptRunningPastAttemptTimeoutFailsWithAttemptTimeoutExceptionAndIsRetried() {
        List<CompletableFuture<String>> stages = new ArrayList<>();
        CompletableFuture<String> future = retry(fixed(3).attemptTimeout(Duration.ofSeconds(2))).callAsync(() -> {
            CompletableFuture<String> stage = calls.incrementAndGet() == 1 ? new CompletableFuture<>()
                    : CompletableFuture.completedFuture("ok");
            stages.add(stage);
            return stage;
        });

        clock.advance(Duration.ofSeconds(2));
        assertThat(calls).as("the timed-out attempt is over, the retry waits its 1 s").hasValue(1);
        clock.advance(Duration.ofSeconds(1));

        assertThat(future).isCompletedWithValue("ok");
        assertThat(stages.get(0)).as("the timed-out stage is cancelled").isCancelled();
        assertThat(events.attempts.get(0).failure()).isInstanceOf(AttemptTimeoutException.class)
                .hasMessageContaining("attempt 1").hasMessageContaining("PT2S");
        assertThat(events.onlyFinish().reason()).isEqualTo(EndReason.RECOVERED);
    }

    @Test
    void anAttemptThatFinishesInTimeIsNotTimedOut() {
        CompletableFuture<String> inFlight = new CompletableFuture<>();
        CompletableFuture<String> future = retry(fixed(3).attemptTimeout(Duration.ofSeconds(2))).callAsync(() -> {
            calls.incrementAndGet();
            return inFlight;
        });

        clock.advance(Duration.ofMillis(1999));
        inFlight.complete("ok");
        clock.runUntilIdle();

        assertThat(future).isCompletedWithValue("ok");
        assertThat(calls).hasValue(1);
        assertThat(clock.pendingTasks()).as("the timeout was called off").isZero();
    }

    @Test
    void everyAttemptTimingOutExhaustsTheAttempts() {
        CompletableFuture<String> future = retry(fixed(3).attemptTimeout(Duration.ofSeconds(1))).callAsync(() -> {
            calls.incrementAndGet();
            return new CompletableFuture<>();
        });

        clock.runUntilIdle();

        assertThat(future.handle((v, t) -> t).join()).isInstanceOf(AttemptTimeoutException.class);
        assertThat(calls).hasValue(3);
        assertThat(events.onlyFinish().reason()).isEqualTo(EndReason.EXHAUSTED);
    }

    @Test
    void anOperationThatThrowsInsteadOfReturningAStageIsRetriedLikeAFailedStage() {
        CompletableFuture<String> future = retry(fixed(3)).callAsync(() -> {
            if (calls.incrementAndGet() == 1) {
                throw new IllegalStateException("threw synchronously");
            }
            return CompletableFuture.completedFuture("ok");
        });

        clock.runUntilIdle();

        assertThat(future).isCompletedWithValue("ok");
    }

    @Test
    void aWaitPastTheDeadlineEndsTheAsyncCallAtOnce() {
        CompletableFuture<String> future = retry(fixed(10).deadline(Duration.ofMillis(1500))).callAsync(() -> failTimes(99));

        clock.runUntilIdle();

        assertThat(future).isCompletedExceptionally();
        assertThat(calls).hasValue(2);
        assertThat(clock.now()).isEqualTo(Duration.ofSeconds(1));
        assertThat(events.onlyFinish().reason()).isEqualTo(EndReason.DEADLINE);
    }

    @Test
    void theOpenBreakerRefusesAnAsyncCallWithCircuitOpenException() {
        CircuitBreaker breaker = CircuitBreaker.builder("down").consecutiveFailures(1).clock(clock).build();
        CircuitBreakerInRetryTest.otherCallersFail(breaker, 1);

        CompletableFuture<String> future = retry(fixed(3)).withCircuitBreaker(breaker).callAsync(() -> failTimes(0));

        assertThat(future.handle((v, t) -> t).join()).isInstanceOf(CircuitOpenException.class);
        assertThat(calls).hasValue(0);
    }

    @Test
    void cancellingAProbeInFlightGivesTheHalfOpenPermitBack() {
        CircuitBreaker breaker = CircuitBreaker.builder("b").consecutiveFailures(1).openDuration(Duration.ofSeconds(1))
                .halfOpenPermits(1).clock(clock).build();
        CircuitBreakerInRetryTest.otherCallersFail(breaker, 1);
        clock.advance(Duration.ofSeconds(1));
        Retry guarded = retry(fixed(3)).withCircuitBreaker(breaker);

        CompletableFuture<String> probe = guarded.callAsync(CompletableFuture::new); // never answers
        probe.cancel(true);
        CompletableFuture<String> next = guarded.callAsync(() -> CompletableFuture.completedFuture("ok"));

        assertThat(next).isCompletedWithValue("ok");
        assertThat(breaker.state()).isEqualTo(CircuitBreaker.State.CLOSED);
    }

    @Test
    void completingTheReturnedFutureByHandStopsFurtherAttemptsLikeACancel() {
        CompletableFuture<String> future = retry(fixed(5)).callAsync(() -> failTimes(99));

        future.complete("given up by the caller");
        clock.runUntilIdle();

        assertThat(calls).hasValue(1);
        assertThat(events.onlyFinish().reason()).isEqualTo(EndReason.CANCELLED);
    }

    @Test
    void completingTheReturnedFutureByHandWhileAnAttemptStartsCancelsThatAttempt() {
        AtomicReference<CompletableFuture<String>> returned = new AtomicReference<>();
        List<CompletableFuture<String>> stages = new ArrayList<>();
        returned.set(retry(fixed(5)).callAsync(() -> {
            if (calls.incrementAndGet() == 1) {
                return CompletableFuture.failedFuture(new IOException("first"));
            }
            returned.get().complete("given up by the caller"); // lands while attempt 2 is being started
            CompletableFuture<String> neverCompletes = new CompletableFuture<>();
            stages.add(neverCompletes);
            return neverCompletes;
        }));

        clock.runUntilIdle();

        assertThat(calls).hasValue(2);
        assertThat(stages).singleElement().satisfies(stage -> assertThat(stage).as("the abandoned attempt").isCancelled());
        assertThat(events.onlyFinish().reason()).isEqualTo(EndReason.CANCELLED);
    }

    @Test
    void completingTheReturnedFutureAsynchronouslyByHandStopsFurtherAttempts() {
        CompletableFuture<String> future = retry(fixed(5)).callAsync(() -> failTimes(99));

        future.completeAsync(() -> "given up by the caller", Runnable::run);
        clock.runUntilIdle();

        assertThat(future).isCompletedWithValue("given up by the caller");
        assertThat(calls).hasValue(1);
        assertThat(events.onlyFinish().reason()).isEqualTo(EndReason.CANCELLED);
    }

    @Test
    void obtrudingAValueStopsFurtherAttempts() {
        CompletableFuture<String> future = retry(fixed(5)).callAsync(() -> failTimes(99));

        future.obtrudeValue("forced");
        clock.runUntilIdle();

        assertThat(calls).hasValue(1);
        assertThat(clock.pendingTasks()).isZero();
        assertThat(events.onlyFinish().reason()).isEqualTo(EndReason.CANCELLED);
    }

    @Test
    void aCallFailedByHandReportsTheExceptionItWasFailedWith() {
        CompletableFuture<String> future = retry(fixed(5)).callAsync(() -> failTimes(99));
        IllegalStateException given = new IllegalStateException("given up by the caller");

        future.completeExceptionally(given);

        assertThat(events.onlyFinish().failure()).isSameAs(given);
        assertThat(clock.pendingTasks()).isZero();
    }

    @Test
    void aCancelAfterAZeroWaitRanOnAnotherThreadStillCancelsTheAttemptInFlight() {
        // The clock runs each task on a thread of its own and returns once it has run, so the
        // second attempt is in flight before the first attempt's wait is even handed back.
        Clock runsBeforeReturning = new Clock() {
            @Override
            public long nanoTime() {
                return clock.nanoTime();
            }

            @Override
            public long currentTimeMillis() {
                return clock.currentTimeMillis();
            }

            @Override
            public void sleep(long nanos) {
                throw new AssertionError("async never sleeps");
            }

            @Override
            public Cancellable schedule(Runnable task, long delayNanos) {
                Thread t = new Thread(task);
                t.start();
                try {
                    t.join();
                } catch (InterruptedException e) {
                    throw new AssertionError(e);
                }
                return () -> false;
            }
        };
        List<CompletableFuture<String>> stages = new ArrayList<>();
        CompletableFuture<String> future = Retry.of("async", RetryPolicy.builder().maxAttempts(5).backoff(Backoff.none())
                .build()).withClock(runsBeforeReturning).callAsync(() -> {
                    if (calls.incrementAndGet() == 1) {
                        return CompletableFuture.failedFuture(new IOException("first"));
                    }
                    CompletableFuture<String> neverCompletes = new CompletableFuture<>();
                    stages.add(neverCompletes);
                    return neverCompletes;
                });

        future.cancel(true);

        assertThat(calls).hasValue(2);
        assertThat(stages).singleElement().satisfies(stage -> assertThat(stage).as("attempt 2, in flight").isCancelled());
    }

    @Test
    void anErrorThrownByAListenerFailsTheFutureInsteadOfLeavingItPendingForever() {
        AssertionError broken = new AssertionError("listener bug");
        Retry retry = retry(fixed(3)).withListener(new RetryListener() {
            @Override
            public void onRetryScheduled(RetryEvent.RetryScheduled event) {
                throw broken;
            }
        });

        CompletableFuture<String> future = retry.callAsync(() -> failTimes(1));
        clock.runUntilIdle();

        assertThat(future).isDone();
        assertThat(future.handle((v, t) -> t).join()).isSameAs(broken);
        assertThat(calls).hasValue(1);
    }

    @Test
    void aCancelArrivingWhileTheAttemptsOutcomeIsBeingHandledStillReportsExactlyOneEnd() {
        // The listener cancels from inside the attempt's completion, after classification and
        // before the end is reported: the interleaving of a cancel racing a completing attempt.
        AtomicReference<CompletableFuture<String>> returned =
                new AtomicReference<>();
        Retry racing = retry(fixed(1)).withListener(new RetryListener() {
            @Override
            public void onAttemptFinished(RetryEvent.AttemptFinished event) {
                returned.get().cancel(true);
            }
        });
        CompletableFuture<String> stage = new CompletableFuture<>();
        returned.set(racing.callAsync(() -> stage));

        stage.complete("ok");

        assertThat(returned.get()).isCancelled();
        assertThat(events.onlyFinish().reason()).isEqualTo(EndReason.CANCELLED);
    }

    @Test
    void eachAsyncAttemptReadsItsContextFromTheEngine() {
        List<String> seen = new ArrayList<>();
        RetryPolicy.Builder policy = fixed(3).deadline(Duration.ofSeconds(10)).attemptTimeout(Duration.ofSeconds(4));

        CompletableFuture<String> future = retry(policy).callAsync(context -> {
            seen.add(context.attempt() + "/" + context.maxAttempts() + " elapsed " + context.elapsed() + " remaining "
                    + context.remaining().orElseThrow() + " timeout " + context.attemptTimeout().orElseThrow()
                    + " last " + (context.lastFailure() == null ? null : context.lastFailure().getMessage()));
            clock.advance(Duration.ofSeconds(3)); // each attempt runs 3 s before it fails
            return failTimes(2);
        });
        clock.runUntilIdle();

        assertThat(future).isCompletedWithValue("ok");
        // attempts begin at 0, 4 and 8 s: the third may run only the 2 s left before the deadline
        assertThat(seen).containsExactly(
                "1/3 elapsed PT0S remaining PT10S timeout PT4S last null",
                "2/3 elapsed PT4S remaining PT6S timeout PT4S last failure 1",
                "3/3 elapsed PT8S remaining PT2S timeout PT2S last failure 2");
    }
}
