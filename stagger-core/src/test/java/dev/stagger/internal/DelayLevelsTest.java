package dev.stagger.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.List;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.LongRange;
import org.junit.jupiter.api.Test;

class DelayLevelsTest {
    private static final long[] DEFAULT = DelayLevels.millis(DelayLevels.defaults());

    /** The stated tolerance: no earlier than due, and within 2.5 x the delay (or 20 ms below 20 ms). */
    @Property
    void aDelayWaitsInTheSmallestLevelAtLeastAsLong(@ForAll @LongRange(min = 1, max = 3_600_000) long delayMillis) {
        long level = DelayLevels.levelFor(DEFAULT, delayMillis);
        assertThat(level).isGreaterThanOrEqualTo(delayMillis);
        assertThat(level).isLessThanOrEqualTo(Math.max(20, (long) Math.ceil(2.5 * delayMillis)));
    }

    @Property
    void aDelayPastTheLargestLevelWaitsInTheLargest(@ForAll @LongRange(min = 3_600_001, max = Long.MAX_VALUE) long delayMillis) {
        assertThat(DelayLevels.levelFor(DEFAULT, delayMillis)).isEqualTo(3_600_000);
    }

    @Test
    void levelsAreSortedAndCheckedNamingTheField() {
        assertThat(DelayLevels.check("delayLevels", List.of(Duration.ofSeconds(2), Duration.ofMillis(5))))
                .containsExactly(Duration.ofMillis(5), Duration.ofSeconds(2));
        assertThatThrownBy(() -> DelayLevels.check("delayLevels", List.of(Duration.ofNanos(1_500_000))))
                .hasMessage("delayLevels must be whole milliseconds of at least 1 ms, got PT0.0015S");
        assertThatThrownBy(() -> DelayLevels.check("delayLevels", List.of(Duration.ofMillis(5), Duration.ofMillis(5))))
                .hasMessage("delayLevels must not repeat a level, got PT0.005S twice");
        assertThatThrownBy(() -> DelayLevels.check("delayLevels", List.of()))
                .hasMessage("delayLevels must have 1 to 100 levels, got 0");
    }
}
