package dev.stagger.rabbitmq.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.LongRange;

class TopologyTest {
    private static final Topology DEFAULT = new Topology("q",
            Topology.defaultLevels().stream().mapToLong(Duration::toMillis).toArray());

    /** The stated tolerance: no earlier than due, and within 2.5 x the delay (or 20 ms below 20 ms). */
    @Property
    void aDelayWaitsInTheSmallestLevelAtLeastAsLong(@ForAll @LongRange(min = 1, max = 3_600_000) long delayMillis) {
        long level = DEFAULT.levelFor(delayMillis);
        assertThat(level).isGreaterThanOrEqualTo(delayMillis);
        assertThat(level).isLessThanOrEqualTo(Math.max(20, (long) Math.ceil(2.5 * delayMillis)));
    }

    @Property
    void aDelayPastTheLargestLevelWaitsInTheLargest(@ForAll @LongRange(min = 3_600_001, max = Long.MAX_VALUE) long delayMillis) {
        assertThat(DEFAULT.levelFor(delayMillis)).isEqualTo(3_600_000);
    }
}
