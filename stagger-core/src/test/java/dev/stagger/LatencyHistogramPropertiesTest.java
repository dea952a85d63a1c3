package dev.stagger;

import static org.assertj.core.api.Assertions.assertThat;

import dev.stagger.testing.VirtualClock;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.DoubleRange;
import net.jqwik.api.constraints.LongRange;
import net.jqwik.api.constraints.Size;

/** The histogram's percentile against a sorted array of the same samples (nearest rank). */
class LatencyHistogramPropertiesTest {

    @Property
    void aPercentileIsNeverBelowTheTrueSampleAndAtMostAnEighthAbove(
            @ForAll("latencies") @Size(min = 1, max = 500) List<Long> samples,
            @ForAll @DoubleRange(min = 0.1, max = 99.9) double percentile) {
        LatencyHistogram h = new LatencyHistogram(new VirtualClock(), Duration.ofSeconds(30).toNanos());
        samples.forEach(h::record);

        long[] sorted = samples.stream().mapToLong(Long::longValue).sorted().toArray();
        long rank = Math.max(1, (long) Math.ceil(percentile / 100.0 * sorted.length));
        long truth = sorted[(int) rank - 1];

        long estimate = h.percentile(percentile);
        assertThat(estimate).isGreaterThanOrEqualTo(truth);
        assertThat(estimate).isLessThanOrEqualTo(truth + truth / 8 + 1);
        assertThat(h.count()).isEqualTo(samples.size());
    }

    @Property
    void everyValueFallsInABucketWhoseUpperEdgeBoundsIt(@ForAll @LongRange(min = 0, max = Long.MAX_VALUE) long v) {
        int b = LatencyHistogram.bucket(v);
        assertThat(b).isBetween(0, LatencyHistogram.BUCKETS - 1);
        assertThat(LatencyHistogram.upperEdge(b)).isGreaterThanOrEqualTo(v);
        if (b > 0) {
            assertThat(LatencyHistogram.upperEdge(b - 1)).isLessThan(v);
        }
    }

    @Property
    void samplesOlderThanTheWindowNoLongerCount(@ForAll("latencies") @Size(min = 1, max = 50) List<Long> old,
                                                @ForAll("latencies") @Size(min = 1, max = 50) List<Long> recent) {
        VirtualClock clock = new VirtualClock();
        LatencyHistogram h = new LatencyHistogram(clock, Duration.ofSeconds(10).toNanos());
        old.forEach(h::record);
        clock.advance(Duration.ofSeconds(10));
        recent.forEach(h::record);
        assertThat(h.count()).isEqualTo(recent.size());
        long[] sorted = recent.stream().mapToLong(Long::longValue).sorted().toArray();
        assertThat(h.percentile(100 - 1e-9)).isGreaterThanOrEqualTo(sorted[sorted.length - 1]);
        assertThat(Arrays.stream(sorted).max().orElseThrow()).isLessThanOrEqualTo(h.percentile(99.99));
    }

    @Provide
    Arbitrary<List<Long>> latencies() {
        // from nanoseconds to minutes, weighted towards the milliseconds a hedge cares about
        return Arbitraries.oneOf(Arbitraries.longs().between(0, 10_000),
                Arbitraries.longs().between(100_000, 500_000_000),
                Arbitraries.longs().between(0, 120_000_000_000L)).list();
    }
}
