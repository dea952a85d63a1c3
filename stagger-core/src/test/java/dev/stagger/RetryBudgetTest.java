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
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

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
        assertThat(budget.minRetriesPerSecond()).isEqualTo(10.0);
    }

    @Test
    void theRatioIsRoundedDownToThousandthsSoDepositsNeverExceedIt() {
        RetryBudget budget = budget().ratio(0.0019).build();

        assertThat(budget.ratio()).isEqualTo(0.001);
    }

    @Test
    void aFloorOutsideItsRangeIsRejectedNamingTheField() {
        assertThatThrownBy(() -> budget().minRetriesPerSecond(0.0001))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContainingAll("minRetriesPerSecond", "1.0E-4");
        assertThatThrownBy(() -> budget().minRetriesPerSecond(Double.NaN))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("minRetriesPerSecond");
        assertThatThrownBy(() -> budget().minRetriesPerSecond(2e6))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("minRetriesPerSecond");
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

    @Test
    void acrossASecondBoundaryTheFloorGrantsNoMoreThanItHolds() {
        // Default budget: 100 tokens and a floor of 10 per second. Asked 200 times just before a
        // second boundary and 200 times just after it, 1 ms apart, it grants the 100 tokens and
        // the floor's 10: a per-second counter would grant 10 more in the new second.
        RetryBudget budget = budget().build();
        clock.advance(Duration.ofMillis(999));

        int granted = ask(budget, 200);
        clock.advance(Duration.ofMillis(1));
        granted += ask(budget, 200);

        assertThat(granted).isEqualTo(110);
    }

    @Test
    void theFloorRefillsContinuouslyAtItsRate() {
        RetryBudget budget = budget().maxTokens(1).minRetriesPerSecond(10).build();
        drain(budget);
        assertThat(ask(budget, 100)).isEqualTo(10);

        clock.advance(Duration.ofMillis(99));
        assertThat(budget.tryAcquireRetry()).isFalse();
        clock.advance(Duration.ofMillis(1));
        assertThat(budget.tryAcquireRetry()).as("one retry's worth refilled in 100 ms").isTrue();
        assertThat(budget.tryAcquireRetry()).isFalse();
    }

    @Test
    void aFloorBelowOnePerSecondAllowsOneRetryEveryInterval() {
        RetryBudget budget = budget().maxTokens(1).minRetriesPerSecond(0.2).build(); // one retry per 5 s
        drain(budget);

        assertThat(ask(budget, 10)).isEqualTo(1);
        clock.advance(Duration.ofMillis(4_999));
        assertThat(ask(budget, 10)).isZero();
        clock.advance(Duration.ofMillis(1));
        assertThat(ask(budget, 10)).isEqualTo(1);
    }

    private static int ask(RetryBudget budget, int times) {
        int granted = 0;
        for (int i = 0; i < times; i++) {
            if (budget.tryAcquireRetry()) {
                granted++;
            }
        }
        return granted;
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
        return load(calls, Duration.ofMillis(1), failureProbability, budget);
    }

    /** Starts {@code calls} async calls {@code spacing} apart on the virtual clock and runs them all to the end. */
    private LoadResult load(int calls, Duration spacing, double failureProbability, RetryBudget budget) {
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
            }), spacing.toNanos() * i);
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

    /**
     * Under 100 % failure with an empty bucket, the load is the offered rate λ times
     * {@code 1 + min(attempts - 1, floor / λ)}: 1.01× at 1,000 calls/s with the default floor of
     * 10 per second, 1.1× at 100/s, 2× at 10/s, and every retry (3×) at 2/s. Measured over 30 s,
     * so the floor's first ten and the last calls' retries add a little.
     */
    @ParameterizedTest
    @CsvSource({"1000, 1.01", "100, 1.1", "10, 2.0", "2, 3.0"})
    void atFullFailureTheLoadIsTheOfferedRateTimesOnePlusTheFloorShare(int callsPerSecond, double expected) {
        RetryBudget budget = budget().build();
        drain(budget);
        int calls = callsPerSecond * 30;

        LoadResult result = load(calls, Duration.ofNanos(1_000_000_000L / callsPerSecond), 1.0, budget);

        double elapsedSeconds = clock.now().toNanos() / 1e9;
        long retries = result.attempts() - calls;
        assertThat((double) retries).as("the bound: ceil(r) + r × T").isLessThanOrEqualTo(10 + 10 * elapsedSeconds);
        assertThat(result.attempts() / (double) calls).isBetween(expected - 0.01, expected + 0.05);
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
