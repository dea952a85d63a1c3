package dev.stagger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import dev.stagger.testing.VirtualClock;
import dev.stagger.testsupport.Await;
import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** A Retry takes a permit of its bulkhead for every attempt and gives it back as the attempt ends. */
class BulkheadInRetryTest {
    private final VirtualClock clock = new VirtualClock();
    private final RecordingListener events = new RecordingListener();
    private final AtomicInteger calls = new AtomicInteger();

    @AfterEach
    void clearInterruptStatus() {
        Thread.interrupted();
    }

    private Bulkhead.Builder bulkhead(int maxConcurrent) {
        return Bulkhead.builder("downstream").maxConcurrent(maxConcurrent).clock(clock);
    }

    private Retry retry(Bulkhead bulkhead, int maxAttempts) {
        RetryPolicy policy = RetryPolicy.builder().maxAttempts(maxAttempts)
                .backoff(Backoff.fixed(Duration.ofSeconds(1))).build();
        return Retry.of("guarded", policy).withBulkhead(bulkhead).withClock(clock).withListener(events)
                .withoutBudget();
    }

    /** Starts a call through {@code bulkhead} whose attempt stays in flight until the returned future completes. */
    private CompletableFuture<String> hold(Bulkhead bulkhead) {
        CompletableFuture<String> inFlight = new CompletableFuture<>();
        Retry.of("holder", RetryPolicy.builder().maxAttempts(1).build()).withBulkhead(bulkhead).withClock(clock)
                .callAsync(() -> inFlight);
        return inFlight;
    }

    @Test
    void aFullBulkheadRefusesTheFirstAttemptWithoutCallingTheOperation() {
        Bulkhead bulkhead = bulkhead(1).build();
        hold(bulkhead);

        Throwable thrown = catchThrowable(() -> retry(bulkhead, 3).call(calls::incrementAndGet));

        assertThat(calls).hasValue(0);
        assertThat(thrown).isInstanceOf(BulkheadFullException.class).hasNoCause();
        BulkheadFullException refused = (BulkheadFullException) thrown;
        assertThat(refused.reason()).isEqualTo(EndReason.BULKHEAD_FULL);
        assertThat(refused.bulkheadName()).isEqualTo("downstream");
        assertThat(refused.limit()).isEqualTo(1);
        assertThat(events.onlyFinish().reason()).isEqualTo(EndReason.BULKHEAD_FULL);
        assertThat(events.onlyFinish().attempts()).isZero();
        assertThat(bulkhead.refusals()).isEqualTo(1);
    }

    @Test
    void aCallUnderTheLimitRunsAndGivesItsPermitBack() throws Exception {
        Bulkhead bulkhead = bulkhead(1).build();

        assertThat(retry(bulkhead, 3).call(() -> bulkhead.inFlight())).isEqualTo(1);

        assertThat(bulkhead.inFlight()).isZero();
        assertThat(events.onlyFinish().reason()).isEqualTo(EndReason.SUCCESS);
    }

    @Test
    void noPermitIsHeldDuringTheWaitBetweenAttempts() {
        Bulkhead bulkhead = bulkhead(1).build();
        CompletableFuture<Object> call = retry(bulkhead, 2).callAsync(
                () -> CompletableFuture.failedFuture(new IOException("503")));

        assertThat(call).isNotDone(); // waiting 1 s for its retry
        assertThat(bulkhead.inFlight()).isZero();
    }

    @Test
    void aRetryRefusedByAFullBulkheadCarriesTheLastFailureAsCause() {
        Bulkhead bulkhead = bulkhead(1).build();
        IOException down = new IOException("503");
        CompletableFuture<Object> call = retry(bulkhead, 3).callAsync(() -> CompletableFuture.failedFuture(down));
        hold(bulkhead); // takes the permit the call gave back for its wait

        clock.advance(Duration.ofSeconds(1));

        Throwable thrown = catchThrowable(call::join).getCause();
        assertThat(thrown).isInstanceOf(BulkheadFullException.class).hasCause(down);
        assertThat(events.onlyFinish().reason()).isEqualTo(EndReason.BULKHEAD_FULL);
        assertThat(events.onlyFinish().attempts()).isEqualTo(1);
    }

    @Test
    void anAsyncCallerWaitsUpToMaxWaitOnTheClockThenIsRefused() {
        Bulkhead bulkhead = bulkhead(1).maxWait(Duration.ofSeconds(1)).build();
        hold(bulkhead);
        CompletableFuture<Object> call = retry(bulkhead, 3).callAsync(() -> CompletableFuture.completedFuture("ok"));

        clock.advance(Duration.ofMillis(999));
        assertThat(call).isNotDone();
        assertThat(bulkhead.waiting()).isEqualTo(1);
        clock.advance(Duration.ofMillis(1));

        assertThat(catchThrowable(call::join).getCause()).isInstanceOf(BulkheadFullException.class);
        assertThat(bulkhead.waiting()).isZero();
        assertThat(clock.pendingTasks()).isZero();
    }

    @Test
    void aPermitGivenBackGoesToTheFirstCallerWaiting() {
        Bulkhead bulkhead = bulkhead(1).maxWait(Duration.ofSeconds(5)).build();
        CompletableFuture<String> holder = hold(bulkhead);
        AtomicReference<String> order = new AtomicReference<>("");
        CompletableFuture<String> first = retry(bulkhead, 1).callAsync(() -> {
            order.updateAndGet(o -> o + "first ");
            return new CompletableFuture<String>(); // keeps the permit
        });
        CompletableFuture<String> second = retry(bulkhead, 1).callAsync(() -> {
            order.updateAndGet(o -> o + "second ");
            return CompletableFuture.completedFuture("second");
        });

        holder.complete("done");

        assertThat(order.get()).isEqualTo("first ");
        assertThat(first).isNotDone();
        assertThat(second).isNotDone();
        assertThat(bulkhead.inFlight()).isEqualTo(1);
        assertThat(bulkhead.waiting()).isEqualTo(1);
    }

    @Test
    void aSyncCallerWaitingForAPermitRunsWhenOneIsGivenBack() throws Exception {
        Bulkhead bulkhead = bulkhead(1).maxWait(Duration.ofSeconds(5)).build();
        CompletableFuture<String> holder = hold(bulkhead);
        CompletableFuture<Object> result = new CompletableFuture<>();
        Thread caller = start(() -> {
            try {
                result.complete(retry(bulkhead, 1).call(() -> "ran"));
            } catch (Exception e) {
                result.completeExceptionally(e);
            }
        });
        Await.until("a caller queued for a permit", () -> bulkhead.waiting() >= 1);

        holder.complete("done");

        assertThat(result.get(10, TimeUnit.SECONDS)).isEqualTo("ran");
        caller.join();
        assertThat(bulkhead.inFlight()).isZero();
    }

    @Test
    void anInterruptWhileWaitingForAPermitEndsTheCallInterruptedHoldingNoPermit() throws Exception {
        Bulkhead bulkhead = bulkhead(1).maxWait(Duration.ofSeconds(5)).build();
        hold(bulkhead);
        AtomicReference<Throwable> thrown = new AtomicReference<>();
        AtomicReference<Boolean> stillInterrupted = new AtomicReference<>();
        CountDownLatch done = new CountDownLatch(1);
        Thread caller = start(() -> {
            thrown.set(catchThrowable(() -> retry(bulkhead, 3).call(calls::incrementAndGet)));
            stillInterrupted.set(Thread.currentThread().isInterrupted());
            done.countDown();
        });
        Await.until("a caller queued for a permit", () -> bulkhead.waiting() >= 1);

        caller.interrupt();

        assertThat(done.await(10, TimeUnit.SECONDS)).isTrue();
        assertThat(thrown.get()).isInstanceOf(InterruptedException.class);
        assertThat(stillInterrupted.get()).isTrue();
        assertThat(events.onlyFinish().reason()).isEqualTo(EndReason.INTERRUPTED);
        assertThat(bulkhead.waiting()).isZero();
        assertThat(bulkhead.inFlight()).isEqualTo(1); // the holder's only
        assertThat(calls).hasValue(0);
    }

    @Test
    void aCancelledCallWaitingForAPermitGivesItBackWhenHandedOne() {
        Bulkhead bulkhead = bulkhead(1).maxWait(Duration.ofSeconds(5)).build();
        CompletableFuture<String> holder = hold(bulkhead);
        CompletableFuture<Object> call = retry(bulkhead, 1).callAsync(() -> {
            calls.incrementAndGet();
            return CompletableFuture.completedFuture("ran");
        });
        call.cancel(true);

        holder.complete("done");

        assertThat(calls).hasValue(0);
        assertThat(bulkhead.inFlight()).isZero();
    }

    @Test
    void slowAttemptsLowerAnAdaptiveLimit() throws Exception {
        Bulkhead bulkhead = bulkhead(10).adaptive(Duration.ofMillis(100)).build();

        retry(bulkhead, 1).call(() -> {
            clock.advance(Duration.ofMillis(150));
            return "slow";
        });

        assertThat(bulkhead.limit()).isEqualTo(9); // 10 x 0.9
    }

    @Test
    void failuresTheClassifierRetriesLowerAnAdaptiveLimitOncePerRoundTrip() {
        Bulkhead bulkhead = bulkhead(10).adaptive(Duration.ofSeconds(10)).build();

        catchThrowable(() -> retry(bulkhead, 3).call(() -> {
            clock.advance(Duration.ofMillis(1));
            throw new IOException("503");
        }));

        assertThat(bulkhead.limit()).isEqualTo(7); // three round trips: 10 x 0.9^3 = 7.29
    }

    @Test
    void aPermanentFailureLeavesAnAdaptiveLimitAlone() {
        Bulkhead bulkhead = bulkhead(10).adaptive(Duration.ofSeconds(10)).build();
        Retry retry = retry(bulkhead, 3).withPolicy(RetryPolicy.builder().maxAttempts(3)
                .retryIf(t -> !(t instanceof IllegalArgumentException)).build());

        catchThrowable(() -> retry.call(() -> {
            throw new IllegalArgumentException("bad request");
        }));

        assertThat(bulkhead.limit()).isEqualTo(10);
    }

    @Test
    void anAdaptiveLimitNeverGoesBelowMinConcurrent() {
        Bulkhead bulkhead = bulkhead(4).minConcurrent(3).adaptive(Duration.ofSeconds(10)).build();

        catchThrowable(() -> retry(bulkhead, 10).call(() -> {
            clock.advance(Duration.ofMillis(1));
            throw new IOException("503");
        }));

        assertThat(bulkhead.limit()).isEqualTo(3);
    }

    @Test
    void aHedgedRetryCannotTakeABulkhead() {
        RetryPolicy hedged = RetryPolicy.builder().hedge(HedgePolicy.after(Duration.ofMillis(50))).build();

        Throwable thrown = catchThrowable(() -> Retry.of("hedged", hedged).withBulkhead(bulkhead(1).build()));

        assertThat(thrown).isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("bulkhead must not guard a hedged retry");
    }

    @Test
    void minConcurrentAboveMaxConcurrentIsRejectedWhenBuilt() {
        Throwable thrown = catchThrowable(() -> bulkhead(2).minConcurrent(3).build());

        assertThat(thrown).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("maxConcurrent must be at least minConcurrent 3, got 2");
    }

    private static Thread start(Runnable r) {
        Thread t = new Thread(r, "bulkhead-caller");
        t.start();
        return t;
    }
}
