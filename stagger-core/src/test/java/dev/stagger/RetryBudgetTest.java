package dev.stagger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;

import dev.stagger.testing.VirtualClock;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class RetryBudgetTest {
    private final VirtualClock clock = new VirtualClock();

    private RetryBudget.Builder budget() {
        return RetryBudget.builder("downstream").clock(clock);
    }

    // ---- the bucket ----

    @Test
    void startsFullAndEachRetrySpendsOneToken() {
        RetryBudget budget = budget().maxTokens(5).minRetriesPerSecond(0).build();

        for (int i = 0; i < 5; i++) {
            assertThat(budget.tryAcquireRetry()).isTrue();
        }

        assertThat(budget.tryAcquireRetry()).isFalse();
        assertThat(budget.tokens()).isZero();
        assertThat(budget.retriesAllowed()).isEqualTo(5);
        assertThat(budget.refusals()).isEqualTo(1);
    }

    @Test
    void eachSuccessDepositsRatioTokens() {
        RetryBudget budget = budget().maxTokens(2).ratio(0.25).minRetriesPerSecond(0).build();
        drain(budget);

        for (int i = 0; i < 4; i++) {
            budget.onSuccess();
        }

        assertThat(budget.tokens()).isEqualTo(1.0);
        assertThat(budget.tryAcquireRetry()).isTrue();
        assertThat(budget.tryAcquireRetry()).isFalse();
    }

    @Test
    void aCapacityTooLargeToCountInThousandthsIsRejectedRatherThanOverflowing() {
        // 1e16 tokens are 1e19 thousandths, past Long.MAX_VALUE: a deposit near the top of such a
        // bucket would wrap the count negative and refuse every retry from then on.
        assertThatThrownBy(() -> RetryBudget.builder("huge").maxTokens(1e16))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContainingAll("maxTokens", "1.0E16");

        RetryBudget largest = budget().maxTokens(1e15).ratio(0.3).minRetriesPerSecond(0).build();
        assertThat(largest.tryAcquireRetry()).isTrue();
        for (int i = 0; i < 4; i++) {
            largest.onSuccess();
        }
        assertThat(largest.tokens()).isEqualTo(1e15);
    }

    @Test
    void depositsStopAtMaxTokens() {
        RetryBudget budget = budget().maxTokens(3).ratio(1).build();

        for (int i = 0; i < 10; i++) {
            budget.onSuccess();
        }

        assertThat(budget.tokens()).isEqualTo(3.0);
    }

    @Test
    void defaultsAreRatioOneTenthOneHundredTokensAndTenRetriesPerSecond() {
        RetryBudget budget = RetryBudget.of("defaults");

        assertThat(budget.ratio()).isEqualTo(0.1);
        assertThat(budget.maxTokens()).isEqualTo(100.0);
        assertThat(budget.tokens()).isEqualTo(100.0);
        assertThat(budget.minRetriesPerSecond()).isEqualTo(10);
    }

    @Test
    void theFloorAllowsMinRetriesPerSecondWhenTheBucketIsEmpty() {
        RetryBudget budget = budget().maxTokens(1).minRetriesPerSecond(3).build();
        drain(budget);

        assertThat(budget.tryAcquireRetry()).isTrue();
        assertThat(budget.tryAcquireRetry()).isTrue();
        assertThat(budget.tryAcquireRetry()).isTrue();
        assertThat(budget.tryAcquireRetry()).isFalse();

        clock.advance(Duration.ofSeconds(1));
        assertThat(budget.tryAcquireRetry()).isTrue();
    }

    private static void drain(RetryBudget budget) {
        while (budget.tokens() >= 1) {
            assertThat(budget.tryAcquireRetry()).isTrue();
        }
    }

    // ---- inside a Retry ----

    private Retry retry(RetryBudget budget, int maxAttempts, RecordingListener events) {
        RetryPolicy policy = RetryPolicy.builder().maxAttempts(maxAttempts).backoff(Backoff.fixed(Duration.ofMillis(100))).build();
        return Retry.of("budgeted", policy).withBudget(budget).withClock(clock).withListener(events);
    }

    @Test
    void firstAttemptsAreNeverRefused() throws Exception {
        RetryBudget empty = budget().maxTokens(1).minRetriesPerSecond(0).build();
        drain(empty);
        AtomicInteger invoked = new AtomicInteger();
        Retry retry = retry(empty, 3, new RecordingListener());

        for (int i = 0; i < 100; i++) {
            catchThrowable(() -> retry.call(() -> {
                invoked.incrementAndGet();
                throw new IOException();
            }));
        }
        String ok = retry.call(() -> "ok");

        assertThat(invoked).hasValue(100);
        assertThat(ok).isEqualTo("ok");
    }

    @Test
    void aRefusedRetryEndsTheCallWithReasonBudgetAndTheLastFailureAsCause() {
        RetryBudget budget = budget().maxTokens(1).minRetriesPerSecond(0).build();
        RecordingListener events = new RecordingListener();
        Retry retry = retry(budget, 5, events);
        List<IOException> failures = new CopyOnWriteArrayList<>();

        Throwable thrown = catchThrowable(() -> retry.call(() -> {
            IOException e = new IOException("failure " + (failures.size() + 1));
            failures.add(e);
            throw e;
        }));

        assertThat(failures).as("one retry paid with the only token, then refused").hasSize(2);
        assertThat(thrown).isInstanceOfSatisfying(BudgetExhaustedException.class, e -> {
            assertThat(e.reason()).isEqualTo(EndReason.BUDGET);
            assertThat(e.getCause()).isSameAs(failures.get(1));
            assertThat(e).hasMessageContaining("downstream");
        });
        assertThat(events.onlyFinish().reason()).isEqualTo(EndReason.BUDGET);
        assertThat(events.onlyFinish().attempts()).isEqualTo(2);
        assertThat(clock.sleeps()).as("no wait is slept for a refused retry").hasSize(1);
        assertThat(budget.refusals()).isEqualTo(1);
    }

    @Test
    void successesInsideARetryDepositIntoTheBudget() throws Exception {
        RetryBudget budget = budget().maxTokens(10).ratio(0.5).minRetriesPerSecond(0).build();
        drain(budget);
        Retry retry = retry(budget, 3, new RecordingListener());

        for (int i = 0; i < 4; i++) {
            retry.call(() -> "ok");
        }

        assertThat(budget.tokens()).isEqualTo(2.0);
    }

    // ---- load: the budget keeps retries a bounded share of traffic ----

    /** Starts {@code calls} async calls 1 ms apart on the virtual clock and runs them all to the end. */
    private LoadResult load(int calls, double failureProbability, RetryBudget budget) {
        RetryPolicy policy = RetryPolicy.builder().maxAttempts(3)
                .backoff(Backoff.exponential(Duration.ofMillis(100)).jitter(Jitter.full())).build();
        RecordingListener events = new RecordingListener();
        Retry retry = Retry.of("load", policy).withBudget(budget).withClock(clock).withListener(events)
                .withRandom(RandomSource.seeded(1));
        SplittableRandom outcomes = new SplittableRandom(2);
        IOException unavailable = new IOException("503"); // one instance: stack traces are not what is measured
        AtomicInteger attempts = new AtomicInteger();
        for (int i = 0; i < calls; i++) {
            clock.schedule(() -> retry.callAsync(() -> {
                attempts.incrementAndGet();
                return outcomes.nextDouble() < failureProbability
                        ? CompletableFuture.failedFuture(unavailable)
                        : CompletableFuture.completedFuture("ok");
            }), Duration.ofMillis(i).toNanos());
        }
        clock.runUntilIdle();
        return new LoadResult(attempts.get(), events);
    }

    private record LoadResult(int attempts, RecordingListener events) {
        long callsEndingWith(EndReason reason) {
            return events.finished.stream().filter(e -> e.reason() == reason).count();
        }

        long callsWhoseFirstAttemptFailed() {
            return events.attempts.stream().filter(e -> e.attempt() == 1 && e.failed()).count();
        }
    }

    @Test
    void atFullFailureTotalAttemptsStayWithinATenthOverCallsPlusTheFloorAndTheInitialTokens() {
        RetryBudget budget = budget().build(); // ratio 0.1, 100 tokens, 10 retries per second
        int calls = 10_000;

        LoadResult result = load(calls, 1.0, budget);

        double elapsedSeconds = clock.now().toNanos() / 1e9;
        double bound = 1.1 * calls + budget.minRetriesPerSecond() * Math.ceil(elapsedSeconds + 1) + budget.maxTokens();
        assertThat(result.events().finished).hasSize(calls);
        assertThat((double) result.attempts()).isLessThanOrEqualTo(bound);
        assertThat(result.attempts()).as("without the budget it would be 3 × calls").isLessThan(calls + 400);
        assertThat(result.callsEndingWith(EndReason.BUDGET)).isGreaterThan(calls * 9L / 10);
    }

    @Test
    void atFivePercentFailuresNearlyEveryFailedCallStillGetsItsRetries() {
        RetryBudget budget = budget().build();
        int calls = 10_000;

        LoadResult result = load(calls, 0.05, budget);

        long failedFirst = result.callsWhoseFirstAttemptFailed();
        assertThat(failedFirst).as("about 5 %% of %d calls", calls).isBetween(400L, 600L);
        assertThat(result.callsEndingWith(EndReason.BUDGET)).isLessThanOrEqualTo(failedFirst / 100);
        assertThat(result.callsEndingWith(EndReason.SUCCESS) + result.callsEndingWith(EndReason.RECOVERED))
                .isGreaterThanOrEqualTo(calls - 5);
        assertThat(budget.refusals()).isEqualTo(result.callsEndingWith(EndReason.BUDGET));
    }
}
