package dev.stagger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import org.junit.jupiter.api.Test;

/**
 * Each jitter stays inside its interval and, over many draws from a seeded source, covers it:
 * the sample mean lands within 2 % of the analytic mean and the extremes come close to the ends.
 */
class JitterTest {
    private static final double D = 1_000_000_000; // one second, in nanoseconds
    private static final int SAMPLES = 200_000;

    @Test
    void noneReturnsTheDelayUnchanged() {
        assertThat(Jitter.none().apply(D, RandomSource.sequence(0.7))).isEqualTo(D);
    }

    @Test
    void fullIsUniformBetweenZeroAndTheDelay() {
        assertCovers(Jitter.full(), 0, D, D / 2);
    }

    @Test
    void equalIsHalfTheDelayPlusUniformUpToTheOtherHalf() {
        assertCovers(Jitter.equal(), D / 2, D, 3 * D / 4);
    }

    @Test
    void proportionalOnlyEverAddsUpToItsFactorOfTheDelay() {
        assertCovers(Jitter.proportional(0.3), D, 1.3 * D, 1.15 * D);
    }

    @Test
    void spreadIsSymmetricAroundTheDelay() {
        assertCovers(Jitter.spread(0.2), 0.8 * D, 1.2 * D, D);
    }

    @Test
    void spreadOfOneCoversZeroToTwiceTheDelay() {
        assertCovers(Jitter.spread(1.0), 0, 2 * D, D);
    }

    @Test
    void fullJitterOfTheSmallestDrawIsZeroAndOfTheLargestIsJustUnderTheDelay() {
        assertThat(Jitter.full().apply(D, RandomSource.sequence(0.0))).isZero();
        assertThat(Jitter.full().apply(D, RandomSource.sequence(0.999_999))).isCloseTo(D, within(D * 1e-6));
    }

    @Test
    void jitterOfAZeroDelayIsZero() {
        for (Jitter jitter : new Jitter[] {Jitter.full(), Jitter.equal(), Jitter.proportional(1), Jitter.spread(1)}) {
            assertThat(jitter.apply(0, RandomSource.sequence(0.9))).isZero();
        }
    }

    @Test
    void theSameSeedGivesTheSameDraws() {
        RandomSource a = RandomSource.seeded(42);
        RandomSource b = RandomSource.seeded(42);
        for (int i = 0; i < 100; i++) {
            assertThat(Jitter.full().apply(D, a)).isEqualTo(Jitter.full().apply(D, b));
        }
    }

    private static void assertCovers(Jitter jitter, double low, double high, double analyticMean) {
        RandomSource random = RandomSource.seeded(20260101);
        double sum = 0;
        double min = Double.MAX_VALUE;
        double max = -Double.MAX_VALUE;
        for (int i = 0; i < SAMPLES; i++) {
            double value = jitter.apply(D, random);
            assertThat(value).isBetween(low, high);
            sum += value;
            min = Math.min(min, value);
            max = Math.max(max, value);
        }
        double width = high - low;
        assertThat(sum / SAMPLES).isCloseTo(analyticMean, within(0.02 * analyticMean));
        assertThat(min).isCloseTo(low, within(0.001 * width));
        assertThat(max).isCloseTo(high, within(0.001 * width));
    }
}
