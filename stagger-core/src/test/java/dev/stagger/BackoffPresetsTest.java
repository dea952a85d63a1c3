package dev.stagger;

import static dev.stagger.Delays.firstDelays;
import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Every preset reproduces its source system's formula exactly, given the same random numbers.
 * Expected values are computed here from each system's published formula, independently of the code.
 */
class BackoffPresetsTest {
    private static final double[] DRAWS = {0.0, 0.25, 0.5, 0.75, 0.999_999, 0.1, 0.9, 0.333, 0.6, 0.05};

    @Test
    void awsFullJitterIsUniformBetweenZeroAndTheCappedExponential() {
        long base = Duration.ofMillis(100).toNanos();
        long cap = Duration.ofSeconds(20).toNanos();
        List<Long> expected = new ArrayList<>();
        for (int n = 0; n < 12; n++) {
            double ceiling = Math.min(cap, base * Math.pow(2, n)); // min(cap, base·2^n)
            expected.add((long) (DRAWS[n % DRAWS.length] * ceiling)); // U(0, ceiling)
        }

        assertThat(nanos(Backoff.awsFullJitter(Duration.ofMillis(100), Duration.ofSeconds(20)), 12)).isEqualTo(expected);
    }

    @Test
    void awsDecorrelatedDrawsBetweenBaseAndThreeTimesThePreviousSleepCappedAtCap() {
        long base = Duration.ofMillis(100).toNanos();
        long cap = Duration.ofSeconds(5).toNanos();
        List<Long> expected = new ArrayList<>();
        long sleep = base; // s_prev starts at base; afterwards it is the sleep actually taken, in whole nanoseconds
        for (int n = 0; n < 12; n++) {
            double r = DRAWS[n % DRAWS.length];
            sleep = (long) Math.min(cap, base + r * (3.0 * sleep - base)); // min(cap, U(base, 3·s_prev))
            expected.add(sleep);
        }

        assertThat(nanos(Backoff.decorrelated(Duration.ofMillis(100), Duration.ofSeconds(5)), 12)).isEqualTo(expected);
    }

    @Test
    void grpcConnectionBackoffGrowsBy1Point6AndSpreads20PercentAfterThe120SecondCap() {
        List<Long> expected = new ArrayList<>();
        for (int n = 0; n < 16; n++) {
            double d = Math.min(1e9 * Math.pow(1.6, n), 120e9); // min(1 s·1.6^n, 120 s)
            double u = 2 * DRAWS[n % DRAWS.length] - 1; // U(-1, 1)
            expected.add((long) (d * (1 + 0.2 * u)));
        }

        assertThat(nanos(Backoff.grpcConnection(), 16)).isEqualTo(expected);
    }

    @Test
    void grpcConnectionBackoffStartsAtOneSecondWhenTheDrawIsCentred() {
        assertThat(firstDelays(Backoff.grpcConnection(), RandomSource.sequence(0.5), 3))
                .containsExactly(Duration.ofSeconds(1), Duration.ofMillis(1600), Duration.ofMillis(2560));
    }

    @Test
    void grpcConnectionBackoffReaches144SecondsBecauseJitterComesAfterTheCap() {
        Backoff grpc = Backoff.grpcConnection();
        List<Duration> late = firstDelays(grpc, RandomSource.sequence(0.999_999), 40).subList(20, 40);

        assertThat(grpc.maxDelay()).isEqualTo(Duration.ofSeconds(144));
        assertThat(late).allSatisfy(d -> assertThat(d)
                .isGreaterThan(Duration.ofSeconds(143)).isLessThanOrEqualTo(Duration.ofSeconds(144)));
    }

    @Test
    void kubernetesDefaultBackoffSleeps10_50_250_1250Then6250ForeverEachPlusUpToTenPercent() {
        // client-go DefaultBackoff {Duration: 10 ms, Factor: 5, Jitter: 0.1, Steps: 4}
        Backoff backoff = Backoff.kubernetes(Duration.ofMillis(10), 5.0, 0.1, 4, Duration.ZERO);
        long[] durationsMillis = {10, 50, 250, 1250, 6250, 6250, 6250, 6250};
        List<Long> expected = new ArrayList<>();
        for (int i = 0; i < durationsMillis.length; i++) {
            long d = Duration.ofMillis(durationsMillis[i]).toNanos();
            expected.add(d + (long) (DRAWS[i] * 0.1 * d)); // D + U(0, Jitter·D), as Go's wait.Jitter does it
        }

        assertThat(nanos(backoff, durationsMillis.length)).isEqualTo(expected);
    }

    @Test
    void kubernetesBackoffWithoutJitterIsTheBareSteps() {
        Backoff backoff = Backoff.kubernetes(Duration.ofMillis(10), 5.0, 0, 4, Duration.ZERO);

        assertThat(firstDelays(backoff, RandomSource.sequence(0.5), 6))
                .isEqualTo(Delays.millis(10, 50, 250, 1250, 6250, 6250));
    }

    @Test
    void kubernetesBackoffStopsStepsOnceTheCapIsHit() {
        // D = 1, 2, 4; then D = 8 > cap 5 → D = 5 and no further steps.
        Backoff backoff = Backoff.kubernetes(Duration.ofSeconds(1), 2.0, 0, 10, Duration.ofSeconds(5));

        assertThat(firstDelays(backoff, RandomSource.sequence(0.5), 6))
                .isEqualTo(Delays.millis(1000, 2000, 4000, 5000, 5000, 5000));
    }

    @Test
    void kubernetesDefaultRetryWaitsTenMillisPlusJitterEveryTime() {
        // client-go DefaultRetry {10 ms, ×1, 0.1, 5}
        Backoff backoff = Backoff.kubernetes(Duration.ofMillis(10), 1.0, 0.1, 5, Duration.ZERO);

        assertThat(firstDelays(backoff, RandomSource.sequence(0.5), 7))
                .allSatisfy(d -> assertThat(d).isEqualTo(Duration.ofNanos(10_500_000)));
    }

    @Test
    void pollyDecorrelatedJitterV2FollowsTheTanhFormula() {
        long median = Duration.ofMillis(100).toNanos();
        long max = Duration.ofSeconds(30).toNanos();
        List<Long> expected = new ArrayList<>();
        double prev = 0;
        for (int n = 0; n < 10; n++) {
            double t = n + DRAWS[n];
            double next = Math.pow(2, t) * Math.tanh(Math.sqrt(4 * t));
            expected.add((long) Math.min((next - prev) * (1 / 1.4) * median, max));
            prev = next;
        }

        assertThat(nanos(Backoff.pollyDecorrelatedJitterV2(Duration.ofMillis(100), Duration.ofSeconds(30)), 10))
                .isEqualTo(expected);
    }

    @Test
    void pollyDecorrelatedJitterV2PutsTheMedianNthRetryAtAboutMedianTimesTwoToTheN() {
        // The delays telescope: the time from the first failure to retry n is next(t_n) / 1.4 · median,
        // whose median is ≈ median·2^n (within 1 % from n = 1; the first retry comes ~10 % early).
        Backoff polly = Backoff.pollyDecorrelatedJitterV2(Duration.ofSeconds(1), Duration.ofDays(1));
        RandomSource random = RandomSource.seeded(7);
        int runs = 4001;
        double[][] elapsed = new double[6][runs];
        for (int run = 0; run < runs; run++) {
            Backoff.Schedule schedule = polly.start(random);
            double total = 0;
            for (int n = 0; n < 6; n++) {
                total += schedule.nextDelayNanos(n + 1) / 1e9;
                elapsed[n][run] = total;
            }
        }
        for (int n = 0; n < 6; n++) {
            Arrays.sort(elapsed[n]);
            double tolerance = n == 0 ? 0.15 : 0.03;
            assertThat(elapsed[n][runs / 2]).as("median time of retry n=%d", n)
                    .isBetween((1 - tolerance) * Math.pow(2, n), (1 + tolerance) * Math.pow(2, n));
        }
    }

    @Test
    void exponentialWithProportionalJitterAddsUpToThirtyPercentToTheCappedDelay() {
        // c = min(maxDelay, base·2^(k-1)), then c + U(0, 0.3·c)
        Backoff backoff = Backoff.exponential(Duration.ofMillis(200)).maxDelay(Duration.ofSeconds(5))
                .jitter(Jitter.proportional(0.3));

        assertThat(firstDelays(backoff, RandomSource.sequence(0.5), 3))
                .containsExactly(Duration.ofMillis(230), Duration.ofMillis(460), Duration.ofMillis(920));
    }

    private static List<Long> nanos(Backoff backoff, int count) {
        Backoff.Schedule schedule = backoff.start(RandomSource.sequence(DRAWS));
        List<Long> delays = new ArrayList<>();
        for (int retry = 1; retry <= count; retry++) {
            delays.add(schedule.nextDelayNanos(retry));
        }
        return delays;
    }
}
