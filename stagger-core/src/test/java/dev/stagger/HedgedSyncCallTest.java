package dev.stagger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import dev.stagger.testing.VirtualClock;
import dev.stagger.testsupport.Await;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Sync hedged calls: the first attempt on the caller's thread, hedges on the policy's executor.
 * Delays on the virtual clock, moved by the test once an attempt is known to be running; latches
 * and bounded polls only to know that.
 */
class HedgedSyncCallTest {
    private static final Duration DELAY = Duration.ofMillis(100);
    private static final long WAIT_SECONDS = 10;

    private final VirtualClock clock = new VirtualClock();
    private final HedgedCallTest.HedgeEvents events = new HedgedCallTest.HedgeEvents();
    private final ExecutorService attempts = Executors.newCachedThreadPool();
    private final ExecutorService callers = Executors.newCachedThreadPool();

    @AfterEach
    void stop() {
        attempts.shutdownNow();
        callers.shutdownNow();
    }

    private Retry retry(HedgePolicy.Builder hedge, int maxAttempts) {
        RetryPolicy policy = RetryPolicy.builder().maxAttempts(maxAttempts).backoff(Backoff.none())
                .hedge(hedge.executor(attempts).build()).build();
        return Retry.of("sync-hedged", policy).withClock(clock).withListener(events).withoutBudget();
    }

    private static void await(CountDownLatch latch) throws InterruptedException {
        assertThat(latch.await(WAIT_SECONDS, TimeUnit.SECONDS)).as("latch released in time").isTrue();
    }

    @Test
    void theFirstAttemptRunsOnTheCallersThread() throws Exception {
        Retry retry = retry(HedgePolicy.builder().delay(DELAY), 3);
        AtomicReference<Thread> ranOn = new AtomicReference<>();

        String result = retry.call(() -> {
            ranOn.set(Thread.currentThread());
            return "ok";
        });

        assertThat(result).isEqualTo("ok");
        assertThat(ranOn.get()).isSameAs(Thread.currentThread());
        assertThat(events.sent).isEmpty();
    }

    @Test
    void aHedgeWinningInterruptsTheCallersAttemptAndTheCallerGetsTheHedgesResult() throws Exception {
        CountDownLatch firstRunning = new CountDownLatch(1);
        CountDownLatch firstInterrupted = new CountDownLatch(1);
        AtomicInteger calls = new AtomicInteger();
        AtomicBoolean interruptedAfterwards = new AtomicBoolean(true);
        Retry retry = retry(HedgePolicy.builder().delay(DELAY), 3);

        CompletableFuture<String> caller = CompletableFuture.supplyAsync(() -> {
            String r = retry.get(() -> {
                if (calls.incrementAndGet() == 1) {
                    firstRunning.countDown();
                    try {
                        Thread.sleep(TimeUnit.SECONDS.toMillis(WAIT_SECONDS * 3));
                    } catch (InterruptedException e) {
                        firstInterrupted.countDown();
                    }
                    return "first";
                }
                return "hedge";
            });
            interruptedAfterwards.set(Thread.currentThread().isInterrupted());
            return r;
        }, callers);
        await(firstRunning);
        clock.advance(DELAY);

        assertThat(caller.get(WAIT_SECONDS, TimeUnit.SECONDS)).isEqualTo("hedge");
        await(firstInterrupted);
        assertThat(events.won).singleElement().satisfies(e -> assertThat(e.attempt()).isEqualTo(2));
        assertThat(interruptedAfterwards).as("the interrupt sent to the caller's attempt is cleared").isFalse();
    }

    @Test
    void aCallerWhoseAttemptIgnoresTheInterruptAnswersWithTheHedgeOnceItReturnsAndItsResultIsDiscarded()
            throws Exception {
        CountDownLatch firstRunning = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        List<Object> discarded = Collections.synchronizedList(new ArrayList<>());
        AtomicInteger calls = new AtomicInteger();
        Retry retry = retry(HedgePolicy.builder().delay(DELAY).onDiscard(discarded::add), 3);

        CompletableFuture<String> caller = CompletableFuture.supplyAsync(() -> retry.get(() -> {
            if (calls.incrementAndGet() == 1) {
                firstRunning.countDown();
                awaitUninterruptibly(release); // like a blocking read that ignores interrupts
                return "late body";
            }
            return "hedge body";
        }), callers);
        await(firstRunning);
        clock.advance(DELAY);
        awaitWon();
        assertThat(caller).as("held by its own attempt").isNotDone();

        release.countDown();
        assertThat(caller.get(WAIT_SECONDS, TimeUnit.SECONDS)).isEqualTo("hedge body");
        assertThat(discarded).containsExactly("late body");
    }

    @Test
    void interruptingTheCallerEndsItsAttemptAndTheCallWithReasonInterrupted() throws Exception {
        CountDownLatch running = new CountDownLatch(1);
        AtomicReference<Throwable> thrown = new AtomicReference<>();
        Retry retry = retry(HedgePolicy.builder().delay(DELAY), 3);

        Thread caller = new Thread(() -> thrown.set(catchThrowable(() -> retry.call(() -> {
            running.countDown();
            Thread.sleep(TimeUnit.SECONDS.toMillis(WAIT_SECONDS * 3));
            return "never";
        }))));
        caller.start();
        await(running);
        caller.interrupt();
        caller.join(TimeUnit.SECONDS.toMillis(WAIT_SECONDS));

        assertThat(caller.isAlive()).isFalse();
        assertThat(thrown.get()).isInstanceOf(InterruptedException.class);
        assertThat(events.onlyFinish().reason()).isEqualTo(EndReason.INTERRUPTED);
        assertThat(clock.pendingTasks()).as("the hedge timer was cancelled").isZero();
    }

    @Test
    void interruptingTheCallerWhileItWaitsForAHedgeCancelsTheHedgeAndKeepsTheInterruptStatus() throws Exception {
        CountDownLatch hedgeRunning = new CountDownLatch(1);
        CountDownLatch hedgeInterrupted = new CountDownLatch(1);
        CountDownLatch firstMayFail = new CountDownLatch(1);
        AtomicBoolean stillInterrupted = new AtomicBoolean();
        AtomicReference<Throwable> thrown = new AtomicReference<>();
        AtomicInteger calls = new AtomicInteger();
        Retry retry = retry(HedgePolicy.builder().delay(DELAY), 3);

        Thread caller = new Thread(() -> {
            thrown.set(catchThrowable(() -> retry.call(() -> {
                if (calls.incrementAndGet() == 1) {
                    awaitUninterruptibly(firstMayFail);
                    throw new IOException("first failed");
                }
                hedgeRunning.countDown();
                try {
                    Thread.sleep(TimeUnit.SECONDS.toMillis(WAIT_SECONDS * 3));
                } catch (InterruptedException e) {
                    hedgeInterrupted.countDown();
                    throw e;
                }
                return "never";
            })));
            stillInterrupted.set(Thread.currentThread().isInterrupted());
        });
        caller.start();
        awaitPending();
        clock.advance(DELAY);
        await(hedgeRunning);
        firstMayFail.countDown();
        awaitAttemptFinished();
        caller.interrupt();
        caller.join(TimeUnit.SECONDS.toMillis(WAIT_SECONDS));

        assertThat(caller.isAlive()).isFalse();
        assertThat(thrown.get()).isInstanceOf(IOException.class);
        assertThat(stillInterrupted).isTrue();
        await(hedgeInterrupted);
        assertThat(events.onlyFinish().reason()).isEqualTo(EndReason.INTERRUPTED);
    }

    /** Bounded polls for what the events say has happened on another thread (no delay is checked by them). */
    private void awaitWon() throws InterruptedException {
        Await.until("a hedge won", () -> !events.won.isEmpty());
    }

    private void awaitPending() throws InterruptedException {
        Await.until("the hedge armed", () -> clock.pendingTasks() > 0);
    }

    private void awaitAttemptFinished() throws InterruptedException {
        Await.until("the first attempt finished", () -> !events.attempts.isEmpty());
    }

    @Test
    void aHedgedCallThatGaveUpInsideAnOuterRetryIsNotRetriedByIt() throws Exception {
        AtomicInteger calls = new AtomicInteger();
        RetryPolicy innerPolicy = RetryPolicy.builder().maxAttempts(2).backoff(Backoff.none())
                .hedge(HedgePolicy.builder().delay(DELAY).executor(Runnable::run).build()).build();
        Retry inner = Retry.of("inner", innerPolicy).withClock(clock).withoutBudget();
        RecordingListener outerEvents = new RecordingListener();
        List<RetryEvent.Deferred> deferred = Collections.synchronizedList(new ArrayList<>());
        Retry outer = Retry.of("outer", RetryPolicy.builder().maxAttempts(3).backoff(Backoff.none()).build())
                .withClock(clock).withoutBudget().withListener(outerEvents).withListener(new RetryListener() {
                    @Override
                    public void onDeferred(RetryEvent.Deferred event) {
                        deferred.add(event);
                    }
                });

        Throwable thrown = catchThrowable(() -> outer.call(() -> inner.call(() -> {
            calls.incrementAndGet();
            throw new IOException("down");
        })));

        assertThat(thrown).isInstanceOf(IOException.class);
        assertThat(calls).as("the inner call's two attempts, not retried again outside").hasValue(2);
        assertThat(outerEvents.onlyFinish().reason()).isEqualTo(EndReason.NOT_RETRYABLE);
        assertThat(deferred).singleElement().satisfies(e -> {
            assertThat(e.inner()).isEqualTo("inner");
            assertThat(e.innerReason()).isEqualTo(EndReason.EXHAUSTED);
        });
    }

    @Test
    void aHedgedCallInsideAnOuterDeadlineArmsNoHedgeItsDeadlineWouldCutShort() throws Exception {
        List<CompletableFuture<String>> started = Collections.synchronizedList(new ArrayList<>());
        RetryPolicy innerPolicy = RetryPolicy.builder().maxAttempts(3).hedge(HedgePolicy.after(DELAY)).build();
        Retry inner = Retry.of("inner", innerPolicy).withClock(clock).withoutBudget();
        Retry outer = Retry.of("outer", RetryPolicy.builder().deadline(DELAY.dividedBy(2)).build())
                .withClock(clock).withoutBudget();

        CompletableFuture<String> call = outer.call(() -> inner.callAsync(() -> {
            CompletableFuture<String> f = new CompletableFuture<>();
            started.add(f);
            return f;
        }));
        assertThat(clock.pendingTasks()).as("50 ms left outside is less than the 100 ms delay").isZero();
        clock.advance(DELAY.multipliedBy(3));
        assertThat(started).hasSize(1);
        started.get(0).complete("ok");
        assertThat(call).isCompletedWithValue("ok");
    }

    @Test
    void aSyncRetryInsideAHedgedAttemptIsBoundedByTheHedgedCallsDeadline() throws Exception {
        Ambient.needFrames();
        AtomicReference<java.util.Optional<Duration>> seen = new AtomicReference<>();
        Retry innermost = Retry.of("innermost", RetryPolicy.builder().build()).withClock(clock).withoutBudget();
        RetryPolicy hedgedPolicy = RetryPolicy.builder().maxAttempts(3).deadline(Duration.ofSeconds(2))
                .hedge(HedgePolicy.builder().delay(DELAY).executor(Runnable::run).build()).build();
        Retry hedged = Retry.of("hedged", hedgedPolicy).withClock(clock).withoutBudget();

        String result = hedged.call(() -> innermost.call((AttemptCallable<String>) context -> {
            seen.set(context.remaining());
            return "ok";
        }));

        assertThat(result).isEqualTo("ok");
        assertThat(seen.get()).hasValueSatisfying(d -> assertThat(d).isLessThanOrEqualTo(Duration.ofSeconds(2)));
    }

    private static void awaitUninterruptibly(CountDownLatch latch) {
        boolean interrupted = false;
        try {
            while (true) {
                try {
                    if (latch.await(WAIT_SECONDS, TimeUnit.SECONDS)) {
                        return;
                    }
                    throw new AssertionError("never released");
                } catch (InterruptedException e) {
                    interrupted = true;
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
