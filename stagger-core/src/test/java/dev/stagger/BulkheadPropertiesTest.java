package dev.stagger;

import static org.assertj.core.api.Assertions.assertThat;

import dev.stagger.testing.VirtualClock;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.Size;

/** An adaptive bulkhead's arithmetic, for every sequence of attempts, latencies and failures. */
class BulkheadPropertiesTest {

    /**
     * Whatever the attempts do, the limit stays within [minConcurrent, maxConcurrent], permits in
     * flight never pass the limit they were taken under, and every permit given back is counted off.
     */
    @Property
    void theLimitStaysWithinItsBoundsAndInFlightNeverPassesIt(
            @ForAll @Size(max = 400) List<@IntRange(min = 0, max = 3) Integer> steps,
            @ForAll @IntRange(min = 1, max = 50) int min,
            @ForAll @IntRange(min = 0, max = 200) int extra,
            @ForAll @IntRange(min = 1, max = 500) int latencyMillis) {
        VirtualClock clock = new VirtualClock();
        Bulkhead bulkhead = Bulkhead.builder("p").minConcurrent(min).maxConcurrent(min + extra)
                .adaptive(Duration.ofMillis(100)).clock(clock).build();
        Deque<BulkheadPermits.Permit> held = new ArrayDeque<>();
        for (int step : steps) {
            switch (step) {
                case 0 -> {
                    int limit = bulkhead.limit();
                    BulkheadPermits.Permit p = bulkhead.permits.tryAcquire();
                    if (p != null) {
                        held.push(p);
                        assertThat(bulkhead.inFlight()).isLessThanOrEqualTo(limit);
                    } else {
                        assertThat(bulkhead.inFlight()).isGreaterThanOrEqualTo(limit);
                    }
                }
                case 1 -> {
                    if (!held.isEmpty()) {
                        bulkhead.permits.release(held.pop(), false);
                    }
                }
                case 2 -> {
                    if (!held.isEmpty()) {
                        bulkhead.permits.release(held.pop(), true);
                    }
                }
                default -> clock.advance(Duration.ofMillis(latencyMillis));
            }
            assertThat(bulkhead.limit()).isBetween(min, min + extra);
            assertThat(bulkhead.inFlight()).isEqualTo(held.size());
        }
    }
}
