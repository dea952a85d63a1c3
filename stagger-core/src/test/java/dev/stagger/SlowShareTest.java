package dev.stagger;

import static org.assertj.core.api.Assertions.assertThat;

import dev.stagger.testing.VirtualClock;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** The overload guard's window of first attempts, on the virtual clock. */
class SlowShareTest {
    private static final Duration HALF = Duration.ofNanos(SlowShare.HALF_WINDOW_NANOS);

    private final VirtualClock clock = new VirtualClock();
    private final SlowShare share = new SlowShare(clock);

    private void record(int inTime, int slow) {
        for (int i = 0; i < inTime; i++) {
            share.answeredInTime();
        }
        for (int i = 0; i < slow; i++) {
            share.outlivedDelay();
        }
    }

    @Test
    void isNotReadBelowTheMinimumOfFirstAttempts() {
        record(0, SlowShare.MIN_SAMPLES - 1);
        assertThat(share.above(0.1)).isFalse();
        share.outlivedDelay();
        assertThat(share.above(0.1)).isTrue();
    }

    @Test
    void tripsOnlyWhenTheSlowShareExceedsTheLimitByMoreThanChance() {
        record(85, 15); // 10 allowed of 100, plus two standard deviations (2 x 3)
        assertThat(share.above(0.1)).as("15 of 100: within chance of 10 %").isFalse();
        record(0, 2);
        assertThat(share.above(0.1)).as("17 of 102").isTrue();
    }

    @Test
    void aTailAtTheExpectedShareDoesNotTripIt() {
        record(380, 20); // 5 %, what a p95 delay expects, against the default 10 %
        assertThat(share.above(0.1)).isFalse();
    }

    @Test
    void readsTheCurrentAndThePreviousHalfWindowAndForgetsOlderOnes() {
        record(0, 30);
        clock.advance(HALF);
        assertThat(share.above(0.1)).as("the previous half still counts").isTrue();
        record(300, 0);
        assertThat(share.above(0.1)).as("diluted by the current half").isFalse();
        clock.advance(HALF.multipliedBy(2));
        record(0, 5);
        assertThat(share.above(0.1)).as("older halves are forgotten: too few attempts now").isFalse();
    }

    @Test
    void aHalfWindowIsStartedAfreshWhenItsSlotIsReused() {
        record(0, 30);
        clock.advance(HALF.multipliedBy(2)); // the same slot, two halves later
        record(100, 0);
        assertThat(share.above(0.01)).isFalse();
    }
}
