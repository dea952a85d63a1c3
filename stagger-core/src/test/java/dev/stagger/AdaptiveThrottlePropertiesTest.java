package dev.stagger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import dev.stagger.testing.VirtualClock;
import java.time.Duration;
import java.util.List;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.DoubleRange;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.Scale;
import net.jqwik.api.constraints.Size;

/** The throttle's arithmetic, for every sequence of outcomes, refusals and clock moves. */
class AdaptiveThrottlePropertiesTest {

    /**
     * Whatever happens, the probability is the formula on the counts the throttle reports, lies in
     * [0, 1), and is 0 whenever requests are at most K times the accepts.
     */
    @Property
    void theProbabilityIsTheFormulaOnTheCountsAndNeverReachesOne(
            @ForAll @Size(max = 500) List<@IntRange(min = 0, max = 3) Integer> steps,
            @ForAll @DoubleRange(min = 1, max = 10) double k,
            @ForAll @IntRange(min = 1, max = 10) int buckets,
            @ForAll @DoubleRange(min = 0, max = 0.999) @Scale(4) double draw) {
        VirtualClock clock = new VirtualClock();
        AdaptiveThrottle throttle = AdaptiveThrottle.builder("p").k(k).window(Duration.ofSeconds(10)).buckets(buckets)
                .random(() -> draw).clock(clock).build();
        for (int step : steps) {
            switch (step) {
                case 0 -> throttle.onAccepted();
                case 1 -> throttle.onRejected();
                case 2 -> throttle.tryAcquire();
                default -> clock.advance(Duration.ofMillis(700));
            }
            long requests = throttle.requests();
            long accepts = throttle.accepts();
            double p = throttle.rejectionProbability();
            assertThat(accepts).isLessThanOrEqualTo(requests);
            assertThat(p).isBetween(0.0, requests / (requests + 1.0));
            if (requests <= k * accepts) {
                assertThat(p).isZero();
            } else {
                assertThat(p).isCloseTo((requests - k * accepts) / (requests + 1), within(1e-12));
            }
        }
    }

    /** A request is refused exactly when the draw falls below the probability, and then it counts. */
    @Property
    void aRefusalHappensExactlyWhenTheDrawIsBelowTheProbability(
            @ForAll @IntRange(min = 0, max = 200) int accepted,
            @ForAll @IntRange(min = 0, max = 200) int rejected,
            @ForAll @DoubleRange(min = 0, max = 0.999) @Scale(4) double draw) {
        AdaptiveThrottle throttle = AdaptiveThrottle.builder("p").random(() -> draw).clock(new VirtualClock()).build();
        for (int i = 0; i < accepted; i++) {
            throttle.onAccepted();
        }
        for (int i = 0; i < rejected; i++) {
            throttle.onRejected();
        }
        double p = throttle.rejectionProbability();
        long before = throttle.requests();

        boolean admitted = throttle.tryAcquire();

        assertThat(admitted).isEqualTo(!(p > 0 && draw < p));
        assertThat(throttle.requests()).isEqualTo(admitted ? before : before + 1);
    }
}
