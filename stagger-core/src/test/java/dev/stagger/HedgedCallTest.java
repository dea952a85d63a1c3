package dev.stagger;

import static org.assertj.core.api.Assertions.assertThat;

import dev.stagger.testing.VirtualClock;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import org.junit.jupiter.api.Test;

/** Every decision of an async hedged call, on the virtual clock: attempts are futures the test completes. */
class HedgedCallTest {
    private static final Duration DELAY = Duration.ofMillis(100);

    private final VirtualClock clock = new VirtualClock();
    private final HedgeEvents events = new HedgeEvents();
    /** The futures handed out, one per attempt, in order. */
    private final List<CompletableFuture<String>> attempts = Collections.synchronizedList(new ArrayList<>());

    private CompletableFuture<String> attempt() {
        CompletableFuture<String> f = new CompletableFuture<>();
        attempts.add(f);
        return f;
    }

    private static RetryPolicy.Builder hedged(int maxAttempts, HedgePolicy hedge) {
        return RetryPolicy.builder().maxAttempts(maxAttempts).backoff(Backoff.fixed(Duration.ofSeconds(1))).hedge(hedge);
    }

    private Retry retry(RetryPolicy.Builder policy) {
        return Retry.of("hedged", policy.build()).withClock(clock).withListener(events).withoutBudget();
    }

    private CompletableFuture<String> call(Retry retry) {
        return retry.callAsync(this::attempt);
    }

    @Test
    void aFirstAttemptAnsweringBeforeTheDelaySendsNoHedgeAndLeavesNoTimer() {
        RetryBudget budget = RetryBudget.builder("b").clock(clock).build();
        CompletableFuture<String> result = call(retry(hedged(3, HedgePolicy.after(DELAY))).withBudget(budget));
        clock.advance(DELAY.minusNanos(1));
        attempts.get(0).complete("first");

        assertThat(result).isCompletedWithValue("first");
        assertThat(attempts).hasSize(1);
        assertThat(clock.pendingTasks()).as("the hedge timer was cancelled").isZero();
        assertThat(budget.tokens()).isEqualTo(budget.maxTokens());
        assertThat(events.finished.get(0).reason()).isEqualTo(EndReason.SUCCESS);
        assertThat(events.sent).isEmpty();
    }

    @Test
    void sendsAHedgeExactlyWhenTheFixedDelayIsOver() {
        call(retry(hedged(3, HedgePolicy.after(DELAY))));
        clock.advance(DELAY.minusNanos(1));
        assertThat(attempts).hasSize(1);

        clock.advance(Duration.ofNanos(1));
        assertThat(attempts).hasSize(2);
        assertThat(events.sent).singleElement().satisfies(e -> {
            assertThat(e.attempt()).isEqualTo(2);
            assertThat(e.delay()).isEqualTo(DELAY);
        });
    }

    @Test
    void theFirstAcceptedOutcomeWinsAndTheOtherAttemptIsCancelled() {
        CompletableFuture<String> result = call(retry(hedged(3, HedgePolicy.after(DELAY))));
        clock.advance(DELAY);
        attempts.get(1).complete("hedge");

        assertThat(result).isCompletedWithValue("hedge");
        assertThat(attempts.get(0)).isCancelled();
        assertThat(events.won).singleElement().satisfies(e -> assertThat(e.attempt()).isEqualTo(2));
        assertThat(events.cancelled).singleElement().satisfies(e -> {
            assertThat(e.attempt()).isEqualTo(1);
            assertThat(e.reason()).isEqualTo(EndReason.RECOVERED);
        });
        assertThat(events.finished.get(0).reason()).isEqualTo(EndReason.RECOVERED);
        assertThat(events.finished.get(0).attempts()).isEqualTo(2);
    }

    @Test
    void theFirstAttemptWinningAfterAHedgeWasSentIsASuccessAndNotAHedgeWin() {
        CompletableFuture<String> result = call(retry(hedged(3, HedgePolicy.after(DELAY))));
        clock.advance(DELAY);
        attempts.get(0).complete("first");

        assertThat(result).isCompletedWithValue("first");
        assertThat(attempts.get(1)).isCancelled();
        assertThat(events.won).isEmpty();
        assertThat(events.finished.get(0).reason()).isEqualTo(EndReason.SUCCESS);
    }

    @Test
    void sendsAtMostMaxHedgesOneDelayApart() {
        call(retry(hedged(5, HedgePolicy.builder().delay(DELAY).maxHedges(2).build())));
        clock.advance(DELAY);
        assertThat(attempts).hasSize(2);
        clock.advance(DELAY);
        assertThat(attempts).hasSize(3);
        clock.advance(DELAY.multipliedBy(10));
        assertThat(attempts).hasSize(3);
        assertThat(clock.pendingTasks()).isZero();
    }

    @Test
    void maxAttemptsCapsHedgesToo() {
        call(retry(hedged(2, HedgePolicy.builder().delay(DELAY).maxHedges(4).build())));
        clock.advance(DELAY.multipliedBy(10));
        assertThat(attempts).hasSize(2);
    }

    @Test
    void everyHedgeSpendsOneTokenOfTheBudget() {
        RetryBudget budget = RetryBudget.builder("b").clock(clock).maxTokens(10).minRetriesPerSecond(0).build();
        call(retry(hedged(5, HedgePolicy.builder().delay(DELAY).maxHedges(3).build())).withBudget(budget));
        clock.advance(DELAY.multipliedBy(3));

        assertThat(attempts).hasSize(4);
        assertThat(budget.tokens()).isEqualTo(7.0);
    }

    @Test
    void noHedgeIsSentWhenTheBudgetRefusesAndTheFirstAttemptStillAnswers() {
        RetryBudget empty = RetryBudget.builder("empty").clock(clock).maxTokens(1).minRetriesPerSecond(0).build();
        assertThat(empty.tryAcquireRetry()).isTrue(); // the only token spent
        CompletableFuture<String> result = call(retry(hedged(3, HedgePolicy.after(DELAY))).withBudget(empty));
        clock.advance(DELAY.multipliedBy(5));
        assertThat(attempts).hasSize(1);
        assertThat(empty.refusals()).isEqualTo(1);

        attempts.get(0).complete("slow but fine");
        assertThat(result).isCompletedWithValue("slow but fine");
    }

    @Test
    void noHedgeIsSentWhileTheBreakerIsOpen() {
        CircuitBreaker breaker = CircuitBreaker.builder("cb").clock(clock).build();
        CompletableFuture<String> result = call(retry(hedged(3, HedgePolicy.after(DELAY))).withCircuitBreaker(breaker));
        breaker.forceOpen();
        clock.advance(DELAY.multipliedBy(5));
        assertThat(attempts).hasSize(1);

        attempts.get(0).complete("ok");
        assertThat(result).isCompletedWithValue("ok");
    }

    @Test
    void noHedgeIsSentWhenTheThrottleRefuses() {
        AdaptiveThrottle throttle = AdaptiveThrottle.builder("t").clock(clock).random(RandomSource.sequence(0.0)).build();
        CompletableFuture<String> result = call(retry(hedged(3, HedgePolicy.after(DELAY))).withThrottle(throttle));
        for (int i = 0; i < 10; i++) {
            throttle.onRejected(); // the backend has been rejecting: p > 0 and the sequence draws 0
        }
        clock.advance(DELAY.multipliedBy(5));
        assertThat(attempts).hasSize(1);

        attempts.get(0).complete("ok");
        assertThat(result).isCompletedWithValue("ok");
    }

    @Test
    void noHedgeIsArmedWhenTheRemainingDeadlineIsShorterThanTheDelay() {
        call(retry(hedged(3, HedgePolicy.after(DELAY)).deadline(DELAY.minusMillis(1))));
        assertThat(clock.pendingTasks()).isZero();
        clock.advance(DELAY.multipliedBy(5));
        assertThat(attempts).hasSize(1);
    }

    @Test
    void theSecondHedgeIsNotArmedWhenTheDeadlineLeavesTooLittleTimeForItsDelay() {
        call(retry(hedged(5, HedgePolicy.builder().delay(DELAY).maxHedges(3).build()).deadline(DELAY.multipliedBy(2))));
        clock.advance(DELAY);
        assertThat(attempts).hasSize(2);
        assertThat(clock.pendingTasks()).as("100 ms left is not more than the 100 ms delay").isZero();
    }

    @Test
    void aNonRetryableFailureEndsTheCallAtOnceAndCancelsTheOthers() {
        RetryPolicy.Builder policy = hedged(3, HedgePolicy.after(DELAY)).abortOn(IllegalArgumentException.class);
        CompletableFuture<String> result = call(retry(policy));
        clock.advance(DELAY);
        IllegalArgumentException permanent = new IllegalArgumentException("bad request");
        attempts.get(1).completeExceptionally(permanent);

        assertThat(result).isCompletedExceptionally();
        assertThat(cause(result)).isSameAs(permanent);
        assertThat(attempts.get(0)).isCancelled();
        assertThat(events.finished.get(0).reason()).isEqualTo(EndReason.NOT_RETRYABLE);
        assertThat(clock.pendingTasks()).isZero();
    }

    @Test
    void aRetryableFailureEndsOnlyItsAttemptWhileAnotherStillRuns() {
        CompletableFuture<String> result = call(retry(hedged(3, HedgePolicy.after(DELAY))));
        clock.advance(DELAY);
        attempts.get(1).completeExceptionally(new IOException("reset"));
        assertThat(result).isNotDone();

        attempts.get(0).complete("first");
        assertThat(result).isCompletedWithValue("first");
        assertThat(events.scheduled).isEmpty();
    }

    @Test
    void whenEveryAttemptOfARoundFailsTheEngineBacksOffAndTheNextRoundHedgesAgain() {
        CompletableFuture<String> result = call(retry(hedged(4, HedgePolicy.after(DELAY))));
        clock.advance(DELAY);
        attempts.get(0).completeExceptionally(new IOException("one"));
        attempts.get(1).completeExceptionally(new IOException("two"));
        assertThat(events.scheduled).singleElement().satisfies(e -> {
            assertThat(e.nextAttempt()).isEqualTo(3);
            assertThat(e.delay()).isEqualTo(Duration.ofSeconds(1));
        });
        clock.advance(Duration.ofSeconds(1).minusNanos(1));
        assertThat(attempts).hasSize(2);
        clock.advance(Duration.ofNanos(1));
        assertThat(attempts).hasSize(3);
        clock.advance(DELAY);
        assertThat(attempts).as("the new round hedges too").hasSize(4);

        attempts.get(3).complete("fourth");
        assertThat(result).isCompletedWithValue("fourth");
        assertThat(events.finished.get(0).reason()).isEqualTo(EndReason.RECOVERED);
    }

    @Test
    void aCallWhoseEveryAttemptFailedEndsExhaustedWithTheLastFailure() {
        CompletableFuture<String> result = call(retry(hedged(2, HedgePolicy.after(DELAY))));
        clock.advance(DELAY);
        IOException last = new IOException("two");
        attempts.get(0).completeExceptionally(new IOException("one"));
        attempts.get(1).completeExceptionally(last);

        assertThat(cause(result)).isSameAs(last);
        assertThat(last.getSuppressed()).extracting(Throwable::getMessage).containsExactly("one");
        assertThat(events.finished.get(0).reason()).isEqualTo(EndReason.EXHAUSTED);
    }

    @Test
    void theRetryAfterAFailedRoundSpendsTheBudgetAndIsRefusedWhenItIsEmpty() {
        RetryBudget budget = RetryBudget.builder("b").clock(clock).maxTokens(1).minRetriesPerSecond(0).build();
        CompletableFuture<String> result = call(retry(hedged(4, HedgePolicy.after(DELAY))).withBudget(budget));
        clock.advance(DELAY); // the hedge takes the only token
        attempts.get(0).completeExceptionally(new IOException("one"));
        attempts.get(1).completeExceptionally(new IOException("two"));

        assertThat(cause(result)).isInstanceOf(BudgetExhaustedException.class);
        assertThat(events.finished.get(0).reason()).isEqualTo(EndReason.BUDGET);
    }

    @Test
    void theAttemptTimeoutBoundsEachAttemptAndATimedOutAttemptLeavesTheOthersRunning() {
        CompletableFuture<String> result =
                call(retry(hedged(2, HedgePolicy.after(DELAY)).attemptTimeout(Duration.ofMillis(150))));
        clock.advance(DELAY);
        assertThat(attempts).hasSize(2);

        clock.advance(Duration.ofMillis(50)); // attempt 1 has run 150 ms
        assertThat(attempts.get(0)).isCancelled();
        assertThat(result).isNotDone();

        clock.advance(Duration.ofMillis(100)); // the hedge has run 150 ms too
        assertThat(attempts.get(1)).isCancelled();
        assertThat(cause(result)).isInstanceOf(AttemptTimeoutException.class);
        assertThat(events.finished.get(0).reason()).isEqualTo(EndReason.EXHAUSTED);
        assertThat(clock.pendingTasks()).isZero();
    }

    @Test
    void anAttemptAnsweringInTimeCancelsItsTimeoutTimer() {
        CompletableFuture<String> result =
                call(retry(hedged(2, HedgePolicy.after(DELAY)).attemptTimeout(Duration.ofMillis(150))));
        clock.advance(Duration.ofMillis(10));
        attempts.get(0).complete("ok");
        assertThat(result).isCompletedWithValue("ok");
        assertThat(clock.pendingTasks()).as("neither the hedge timer nor the attempt timeout is left").isZero();
    }

    @Test
    void cancellingTheReturnedFutureCancelsEveryAttemptAndEveryTimer() {
        CompletableFuture<String> result = call(retry(hedged(5, HedgePolicy.builder().delay(DELAY).maxHedges(3).build())));
        clock.advance(DELAY);
        result.cancel(true);

        assertThat(attempts).allSatisfy(f -> assertThat(f).isCancelled());
        assertThat(clock.pendingTasks()).isZero();
        clock.advance(DELAY.multipliedBy(10));
        assertThat(attempts).hasSize(2);
        assertThat(events.finished.get(0).reason()).isEqualTo(EndReason.CANCELLED);
        assertThat(events.cancelled).extracting(RetryEvent.AttemptCancelled::attempt).containsExactly(1, 2);
    }

    @Test
    void aPercentileDelayUsesTheFixedDelayUntilWarmedUpThenFollowsRecentLatencies() {
        HedgePolicy hedge = HedgePolicy.builder().delay(DELAY).percentile(50).warmup(10).floor(Duration.ofMillis(1)).build();
        Retry retry = retry(hedged(3, hedge));
        for (int i = 0; i < 9; i++) {
            completeAfter(retry, Duration.ofMillis(20));
        }
        assertThat(retry.hedgeDelay()).contains(DELAY);

        completeAfter(retry, Duration.ofMillis(20));
        assertThat(retry.hedgeDelay()).hasValueSatisfying(d ->
                assertThat(d).isBetween(Duration.ofMillis(20), Duration.ofMillis(20).multipliedBy(9).dividedBy(8)));
    }

    @Test
    void aPercentileDelayNeverGoesBelowTheFloor() {
        HedgePolicy hedge = HedgePolicy.builder().delay(DELAY).percentile(95).warmup(5).floor(Duration.ofMillis(50)).build();
        Retry retry = retry(hedged(3, hedge));
        for (int i = 0; i < 5; i++) {
            completeAfter(retry, Duration.ofMillis(2));
        }
        assertThat(retry.hedgeDelay()).contains(Duration.ofMillis(50));
    }

    @Test
    void theDelayAHedgedCallArmsIsThePercentileOnceWarmedUp() {
        HedgePolicy hedge = HedgePolicy.builder().delay(DELAY).percentile(50).warmup(3).floor(Duration.ZERO).build();
        Retry retry = retry(hedged(3, hedge));
        for (int i = 0; i < 3; i++) {
            completeAfter(retry, Duration.ofMillis(8));
        }
        long delay = retry.hedgeDelay().orElseThrow().toNanos();
        int before = attempts.size();
        call(retry);
        clock.advance(Duration.ofNanos(delay - 1));
        assertThat(attempts).hasSize(before + 1);
        clock.advance(Duration.ofNanos(1));
        assertThat(attempts).hasSize(before + 2);
    }

    @Test
    void aPolicyThatHedgesNeedsRoomForAHedgeInMaxAttempts() {
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> hedged(1, HedgePolicy.after(DELAY)).build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("maxAttempts").hasMessageContaining("got 1");
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> HedgePolicy.builder().delay(DELAY).maxHedges(5))
                .hasMessage("maxHedges must be at most 4, got 5");
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> HedgePolicy.builder().percentile(100))
                .hasMessage("percentile must be in (0.0, 100.0), got 100.0");
    }

    @Test
    void aP95DelayStaysNearTheBodyOfTheDistributionWhenHedgesRescueTheTail() {
        HedgePolicy hedge = HedgePolicy.builder().delay(DELAY).percentile(95).warmup(100).build();
        Retry retry = retry(hedged(2, hedge));
        for (int i = 0; i < 2000; i++) {
            Duration delay = retry.hedgeDelay().orElseThrow();
            Duration body = Duration.ofMillis(50 + i % 11); // 98 % of attempts take 50..60 ms
            int before = attempts.size();
            CompletableFuture<String> result = call(retry);
            if (i % 50 != 7) {
                clock.advance(body);
                attempts.get(before).complete("ok");
            } else { // 2 % take 1 s: the hedge sent after the delay answers in the body's time
                clock.advance(delay);
                assertThat(attempts).hasSize(before + 2);
                clock.advance(body);
                attempts.get(before + 1).complete("hedge");
            }
            assertThat(result).isDone();
        }
        assertThat(retry.hedgeDelay()).hasValueSatisfying(d ->
                assertThat(d).isBetween(Duration.ofMillis(55), Duration.ofMillis(70)));
    }

    private void completeAfter(Retry retry, Duration latency) {
        CompletableFuture<String> result = call(retry);
        clock.advance(latency);
        attempts.get(attempts.size() - 1).complete("ok");
        assertThat(result).isCompletedWithValue("ok");
    }

    private static Throwable cause(CompletableFuture<?> f) {
        try {
            f.get();
            throw new AssertionError("expected a failure");
        } catch (ExecutionException e) {
            return e.getCause();
        } catch (InterruptedException e) {
            throw new AssertionError(e);
        }
    }

    /** The events of hedged calls, with the retry's usual ones. */
    /** A delay short enough that a few dozen calls take far less than a credit's refill time. */
    private static final Duration SHORT = Duration.ofMillis(1);

    /** Makes {@code n} calls whose first attempt wins just after its hedge was sent: n losing hedges. */
    private void losingHedges(Retry retry, int n) {
        for (int i = 0; i < n; i++) {
            int first = attempts.size();
            CompletableFuture<String> result = call(retry);
            clock.advance(SHORT);
            attempts.get(first).complete("first");
            assertThat(result).isCompletedWithValue("first");
        }
    }

    @Test
    void hedgesStopOnceRecentHedgesKeepLosing() {
        Retry retry = retry(hedged(3, HedgePolicy.after(SHORT)));
        losingHedges(retry, (int) Hedging.INITIAL_CREDIT + 5);

        assertThat(events.sent).as("hedges sent").hasSize((int) Hedging.INITIAL_CREDIT);
        assertThat(retry.hedgesRefused()).as("refusals counted").isEqualTo(5);
    }

    @Test
    void aWinningHedgeEarnsBackTheCreditOfSeveralLosingOnes() {
        Retry retry = retry(hedged(3, HedgePolicy.after(SHORT)));
        losingHedges(retry, (int) Hedging.INITIAL_CREDIT - 1);
        int first = attempts.size();
        CompletableFuture<String> won = call(retry);
        clock.advance(SHORT);
        attempts.get(first + 1).complete("hedge");
        assertThat(won).isCompletedWithValue("hedge");

        losingHedges(retry, 10);

        assertThat(events.sent).as("hedges sent").hasSize((int) Hedging.INITIAL_CREDIT + (int) Hedging.WIN_CREDIT);
    }

    @Test
    void creditComesBackWithTimeSoHedgingResumesAfterAnOverload() {
        Retry retry = retry(hedged(3, HedgePolicy.after(SHORT)));
        losingHedges(retry, (int) Hedging.INITIAL_CREDIT + 1);
        int sentBefore = events.sent.size();

        clock.advance(Duration.ofNanos(Hedging.REFILL_NANOS));
        losingHedges(retry, 3);

        assertThat(events.sent.size() - sentBefore).as("hedges sent after a refill").isEqualTo(1);
    }

    static final class HedgeEvents extends RecordingListener {
        final List<RetryEvent.HedgeSent> sent = Collections.synchronizedList(new ArrayList<>());
        final List<RetryEvent.HedgeWon> won = Collections.synchronizedList(new ArrayList<>());
        final List<RetryEvent.AttemptCancelled> cancelled = Collections.synchronizedList(new ArrayList<>());

        @Override
        public void onHedgeSent(RetryEvent.HedgeSent event) {
            sent.add(event);
        }

        @Override
        public void onHedgeWon(RetryEvent.HedgeWon event) {
            won.add(event);
        }

        @Override
        public void onAttemptCancelled(RetryEvent.AttemptCancelled event) {
            cancelled.add(event);
        }
    }
}
