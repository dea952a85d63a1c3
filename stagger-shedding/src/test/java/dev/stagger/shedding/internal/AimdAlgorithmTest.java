package dev.stagger.shedding.internal;

import dev.stagger.internal.LimitAlgorithm;

import static org.assertj.core.api.Assertions.assertThat;

import dev.stagger.RandomSource;
import dev.stagger.shedding.AimdLimit;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** Samples carry their own timestamps (virtual nanoseconds): no clock, no sleeping. */
class AimdAlgorithmTest {
    private static final long MS = 1_000_000L;
    private static final Duration THRESHOLD = Duration.ofMillis(100);

    private static LimitAlgorithm aimd(int initial) {
        return Limits.algorithm(AimdLimit.builder(THRESHOLD).initialLimit(initial).build(), RandomSource.sequence(0.5), 0);
    }

    @Test
    void growsByAboutOnePerFullWindowOfFastRequests() {
        LimitAlgorithm limit = aimd(10);
        for (int i = 0; i < 10; i++) {
            limit.onSample(0, 10 * MS, 10);
        }
        assertThat(limit.limit()).isEqualTo(10); // 10 + ten steps of about 1/10: 10.95
        limit.onSample(0, 10 * MS, 10);
        assertThat(limit.limit()).isEqualTo(11);
    }

    @Test
    void doesNotGrowWhileLessThanHalfTheLimitIsInUse() {
        LimitAlgorithm limit = aimd(10);
        for (int i = 0; i < 100; i++) {
            limit.onSample(0, 10 * MS, 4);
        }
        assertThat(limit.limit()).isEqualTo(10);
    }

    @Test
    void aSlowRequestMultipliesTheLimitByTheBackoffRatio() {
        LimitAlgorithm limit = aimd(20);
        assertThat(limit.onSample(0, 101 * MS, 20)).isEqualTo(18);
    }

    @Test
    void aRequestAtExactlyTheThresholdIsNotSlow() {
        LimitAlgorithm limit = aimd(20);
        assertThat(limit.onSample(0, 100 * MS, 1)).isEqualTo(20);
    }

    @Test
    void slowRequestsThatWereInFlightTogetherDecreaseItOnce() {
        LimitAlgorithm limit = aimd(20);
        for (int i = 0; i < 5; i++) {
            limit.onSample(i * MS, (200 + i) * MS, 20); // all admitted before the first one ended
        }
        assertThat(limit.limit()).isEqualTo(18);
    }

    @Test
    void aSlowRequestAdmittedAfterTheLastDecreaseDecreasesAgain() {
        LimitAlgorithm limit = aimd(20);
        limit.onSample(0, 200 * MS, 20);
        limit.onSample(200 * MS, 400 * MS, 18);
        assertThat(limit.limit()).isEqualTo(16); // 20 * 0.9 * 0.9 = 16.2
    }

    @Test
    void staysWithinItsMinimumAndMaximum() {
        LimitAlgorithm limit = Limits.algorithm(AimdLimit.builder(THRESHOLD).initialLimit(5).minLimit(4).maxLimit(6).build(),
                RandomSource.sequence(0.5), 0);
        for (int i = 0; i < 10; i++) {
            limit.onSample(i * 1000 * MS, (i * 1000 + 500) * MS, 5);
        }
        assertThat(limit.limit()).isEqualTo(4);
        for (int i = 0; i < 1000; i++) {
            limit.onSample(0, MS, 6);
        }
        assertThat(limit.limit()).isEqualTo(6);
    }
}
