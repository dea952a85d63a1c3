package dev.stagger.shedding.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Set;
import java.util.TreeSet;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.DoubleRange;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.LongRange;
import org.junit.jupiter.api.Test;

class RetryAfterRuleTest {
    private final RetryAfterRule rule = new RetryAfterRule(1, 30, 0.5);

    @Test
    void isTheTimeToServeWhatIsHeldPlusWhatWasTurnedAwayAtTheCurrentDrainRate() {
        // 3x overload of a 400/s server: 800 shed and 400 admitted in the last second, 25 in flight
        assertThat(rule.baseSeconds(25, 800, 400)).isEqualTo(3); // 2.06 s, rounded up
        assertThat(rule.baseSeconds(10, 390, 400)).isEqualTo(1);
        assertThat(rule.baseSeconds(0, 4_000, 400)).isEqualTo(10);
    }

    @Test
    void isTheMinimumWhenNothingWasAdmittedToMeasureARateBy() {
        assertThat(rule.baseSeconds(5, 500, 0)).isEqualTo(1);
        assertThat(new RetryAfterRule(2, 30, 0.5).baseSeconds(5, 500, 0)).isEqualTo(2);
    }

    @Test
    void isClampedToTheMaximum() {
        assertThat(rule.baseSeconds(0, 1e9, 1)).isEqualTo(30);
    }

    @Test
    void jitterSpreadsOverWholeSecondsFromTheBaseUpward() {
        assertThat(values(rule, 1)).containsExactly(1L, 2L);
        assertThat(values(rule, 3)).containsExactly(3L, 4L, 5L);
        assertThat(values(rule, 10)).containsExactly(10L, 11L, 12L, 13L, 14L, 15L);
    }

    @Test
    void jitterShiftsDownRatherThanPassTheMaximum() {
        assertThat(values(rule, 30)).containsExactly(15L, 16L, 17L, 18L, 19L, 20L, 21L, 22L, 23L, 24L, 25L, 26L,
                27L, 28L, 29L, 30L);
        assertThat(values(new RetryAfterRule(1, 3, 0.5), 3)).containsExactly(1L, 2L, 3L);
    }

    @Test
    void noJitterSendsTheBaseToEveryone() {
        assertThat(values(new RetryAfterRule(1, 30, 0), 4)).containsExactly(4L);
    }

    @Property
    void neverLeavesTheConfiguredRange(@ForAll @LongRange(min = 0, max = 100) long min,
                                       @ForAll @LongRange(min = 0, max = 100) long extra,
                                       @ForAll @DoubleRange(min = 0, max = 1) double jitter,
                                       @ForAll @IntRange(min = 0, max = 100_000) int inFlight,
                                       @ForAll double shed, @ForAll double admitted,
                                       @ForAll @DoubleRange(min = 0, max = 1, maxIncluded = false) double uniform) {
        RetryAfterRule r = new RetryAfterRule(min, min + extra, jitter);
        long base = r.baseSeconds(inFlight, shed, admitted);
        assertThat(base).isBetween(min, min + extra);
        assertThat(r.jittered(base, uniform)).isBetween(min, min + extra);
    }

    private static Set<Long> values(RetryAfterRule rule, long base) {
        Set<Long> seen = new TreeSet<>();
        for (int i = 0; i < 10_000; i++) {
            seen.add(rule.jittered(base, i / 10_000.0));
        }
        return seen;
    }
}
