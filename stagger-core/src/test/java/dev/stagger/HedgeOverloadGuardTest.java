package dev.stagger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.stagger.testing.VirtualClock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/**
 * The overload guard of hedging, on the virtual clock: hedges are refused while most first attempts
 * outlive the delay (the slowness is everyone's), and sent again once slow attempts are a tail.
 * Hedges here win, so the credit never runs out: whatever stops them is the guard.
 */
class HedgeOverloadGuardTest {
    private static final Duration DELAY = Duration.ofMillis(10);
    private static final Duration FAST = Duration.ofMillis(2);

    private final VirtualClock clock = new VirtualClock();
    private final HedgedCallTest.HedgeEvents events = new HedgedCallTest.HedgeEvents();
    private final List<CompletableFuture<String>> attempts = Collections.synchronizedList(new ArrayList<>());

    private Retry retry(HedgePolicy hedge) {
        RetryPolicy policy = RetryPolicy.builder().maxAttempts(2).backoff(Backoff.none()).hedge(hedge).build();
        return Retry.of("guarded", policy).withClock(clock).withListener(events).withoutBudget();
    }

    /** A delay at the 95th percentile, still warming up: the fixed delay, the default share (10 %). */
    private static HedgePolicy p95() {
        return HedgePolicy.builder().delay(DELAY).percentile(95).warmup(100_000).build();
    }

    private CompletableFuture<String> start(Retry retry) {
        return retry.callAsync(() -> {
            CompletableFuture<String> f = new CompletableFuture<>();
            attempts.add(f);
            return f;
        });
    }

    /** A call whose first attempt outlives the delay; true when a hedge was sent (it then wins). */
    private boolean slowCall(Retry retry) {
        int first = attempts.size();
        CompletableFuture<String> result = start(retry);
        clock.advance(DELAY);
        boolean hedged = attempts.size() == first + 2;
        attempts.get(hedged ? first + 1 : first).complete("ok");
        assertThat(result).as("a refused hedge never ends the call").isCompletedWithValue("ok");
        return hedged;
    }

    /** A call whose first attempt answers well before the delay. */
    private void fastCall(Retry retry) {
        int first = attempts.size();
        CompletableFuture<String> result = start(retry);
        clock.advance(FAST);
        attempts.get(first).complete("ok");
        assertThat(result).isCompletedWithValue("ok");
        assertThat(attempts).hasSize(first + 1);
    }

    /** Makes {@code slowCalls} slow calls one after another; how many were hedged. */
    private int hedgedAmong(Retry retry, int slowCalls) {
        int hedged = 0;
        for (int i = 0; i < slowCalls; i++) {
            hedged += slowCall(retry) ? 1 : 0;
        }
        return hedged;
    }

    @Test
    void hedgesStopWithinTheGuardsMinimumOfCallsWhenEveryFirstAttemptOutlivesTheDelay() {
        Retry retry = retry(p95());

        int hedged = hedgedAmong(retry, 60);

        assertThat(hedged).as("hedges sent among 60 slow calls").isLessThanOrEqualTo(SlowShare.MIN_SAMPLES);
        assertThat(hedgedAmong(retry, 20)).as("hedges sent once the guard tripped").isZero();
        assertThat(retry.hedgesRefused()).isEqualTo(80 - hedged);
    }

    @Test
    void hedgingResumesOnceSlowFirstAttemptsAreATailAgain() {
        Retry retry = retry(p95());
        hedgedAmong(retry, 60);
        assertThat(slowCall(retry)).as("refused while every attempt is slow").isFalse();

        clock.advance(Duration.ofSeconds(1)); // the overload's window has passed
        for (int i = 0; i < 40; i++) {
            fastCall(retry);
        }

        assertThat(slowCall(retry)).as("a slow call among fast ones is hedged again").isTrue();
    }

    @Test
    void aFixedDelayIsGuardedWithTheShareItSets() {
        Retry retry = retry(HedgePolicy.builder().delay(DELAY).maxSlowShare(0.5).build());

        assertThat(hedgedAmong(retry, 60)).isLessThanOrEqualTo(SlowShare.MIN_SAMPLES);
        assertThat(slowCall(retry)).isFalse();
    }

    @Test
    void aFixedDelayWithoutAShareIsNotGuarded() {
        Retry retry = retry(HedgePolicy.after(DELAY));

        assertThat(hedgedAmong(retry, 60)).as("winning hedges keep their credit").isEqualTo(60);
        assertThat(retry.hedgesRefused()).isZero();
    }

    @Test
    void aGenuineTailKeepsBeingHedged() {
        Retry retry = retry(p95());
        int slow = 0;
        int hedged = 0;
        for (int i = 0; i < 2_000; i++) {
            if (i % 25 == 3) { // 4 % of first attempts outlive the delay
                slow++;
                hedged += slowCall(retry) ? 1 : 0;
            } else {
                fastCall(retry);
            }
        }
        assertThat(hedged).as("slow calls hedged").isEqualTo(slow);
        assertThat(retry.hedgesRefused()).isZero();
    }

    @Test
    void aTailDrawnAtRandomAtTheShareThePercentileExpectsKeepsBeingHedged() {
        Retry retry = retry(p95());
        java.util.SplittableRandom random = new java.util.SplittableRandom(7);
        int slow = 0;
        int hedged = 0;
        for (int i = 0; i < 4_000; i++) {
            if (random.nextDouble() < 0.05) { // what a p95 delay expects to outlive it, half the default share
                slow++;
                hedged += slowCall(retry) ? 1 : 0;
            } else {
                fastCall(retry);
            }
        }
        assertThat(hedged).as("slow calls hedged").isEqualTo(slow);
    }

    @Test
    void aFewSlowCallsOnAQuietServiceAreStillHedged() {
        Retry retry = retry(p95());
        int hedged = 0;
        for (int i = 0; i < 30; i++) {
            hedged += slowCall(retry) ? 1 : 0;
            clock.advance(Duration.ofSeconds(2)); // a call every two seconds, every one slow
        }
        assertThat(hedged).isEqualTo(30);
    }

    @Test
    void theDefaultShareIsTwiceWhatShouldOutliveAPercentileDelay() {
        assertThat(p95().maxSlowShare()).hasValue(0.1);
        assertThat(HedgePolicy.builder().delay(DELAY).percentile(99).build().maxSlowShare().getAsDouble())
                .isCloseTo(0.02, org.assertj.core.data.Offset.offset(1e-12));
        assertThat(HedgePolicy.builder().delay(DELAY).percentile(50).build().maxSlowShare())
                .as("every call may outlive a median delay twice over: no guard").isEmpty();
        assertThat(HedgePolicy.after(DELAY).maxSlowShare()).as("a fixed delay").isEmpty();
        assertThat(HedgePolicy.builder().delay(DELAY).percentile(95).maxSlowShare(1).build().maxSlowShare())
                .as("a share of 1 turns the guard off").isEmpty();
        assertThat(HedgePolicy.builder().delay(DELAY).maxSlowShare(0.25).build().maxSlowShare()).hasValue(0.25);
    }

    @Test
    void theBuilderRefusesAShareOutsideZeroToOne() {
        HedgePolicy.Builder b = HedgePolicy.builder().delay(DELAY);
        assertThatThrownBy(() -> b.maxSlowShare(0))
                .isInstanceOf(IllegalArgumentException.class).hasMessage("maxSlowShare must be a positive number, got 0.0");
        assertThatThrownBy(() -> b.maxSlowShare(-0.5))
                .isInstanceOf(IllegalArgumentException.class).hasMessage("maxSlowShare must be a positive number, got -0.5");
        assertThatThrownBy(() -> b.maxSlowShare(1.5))
                .isInstanceOf(IllegalArgumentException.class).hasMessage("maxSlowShare must be in [0.0, 1.0], got 1.5");
        assertThatThrownBy(() -> b.maxSlowShare(Double.NaN))
                .isInstanceOf(IllegalArgumentException.class).hasMessage("maxSlowShare must be a positive number, got NaN");
    }
}
