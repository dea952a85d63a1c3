package dev.stagger;

import static dev.stagger.Delays.firstDelays;
import static dev.stagger.Delays.millis;
import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

class BackoffScheduleTest {
    private static final RandomSource NEVER_USED = () -> {
        throw new AssertionError("a backoff without jitter must not draw random numbers");
    };

    @Test
    void exponentialFrom200MillisDoublingWaits200_400_800_1600() {
        Backoff backoff = Backoff.exponential(Duration.ofMillis(200)).multiplier(2);

        assertThat(firstDelays(backoff, NEVER_USED, 4)).isEqualTo(millis(200, 400, 800, 1600));
    }

    @Test
    void exponentialDoublesUnlessToldOtherwise() {
        assertThat(firstDelays(Backoff.exponential(Duration.ofMillis(200)), NEVER_USED, 4))
                .isEqualTo(millis(200, 400, 800, 1600));
    }

    @Test
    void exponentialWithMultiplierThreeTriplesEachWait() {
        Backoff backoff = Backoff.exponential(Duration.ofMillis(100)).multiplier(3);

        assertThat(firstDelays(backoff, NEVER_USED, 4)).isEqualTo(millis(100, 300, 900, 2700));
    }

    @Test
    void exponentialStopsGrowingAtMaxDelay() {
        Backoff backoff = Backoff.exponential(Duration.ofMillis(200)).maxDelay(Duration.ofSeconds(1));

        assertThat(firstDelays(backoff, NEVER_USED, 6)).isEqualTo(millis(200, 400, 800, 1000, 1000, 1000));
    }

    @Test
    void fixedWaitsTheSameEveryTime() {
        assertThat(firstDelays(Backoff.fixed(Duration.ofMillis(250)), NEVER_USED, 4))
                .isEqualTo(millis(250, 250, 250, 250));
    }

    @Test
    void linearAddsOneStepPerRetry() {
        Backoff backoff = Backoff.linear(Duration.ofMillis(100), Duration.ofMillis(50));

        assertThat(firstDelays(backoff, NEVER_USED, 4)).isEqualTo(millis(100, 150, 200, 250));
    }

    @Test
    void linearStopsGrowingAtMaxDelay() {
        Backoff backoff = Backoff.linear(Duration.ofMillis(100), Duration.ofMillis(100)).maxDelay(Duration.ofMillis(250));

        assertThat(firstDelays(backoff, NEVER_USED, 4)).isEqualTo(millis(100, 200, 250, 250));
    }

    @Test
    void noneNeverWaits() {
        assertThat(firstDelays(Backoff.none(), NEVER_USED, 3)).isEqualTo(millis(0, 0, 0));
    }

    @Test
    void decorrelatedDrawsBetweenBaseAndThreeTimesThePreviousWait() {
        // s1 = 100 + 0.5·(300 − 100) = 200; s2 = 100 + 0.5·(600 − 100) = 350; s3 = 100 + 0.25·(1050 − 100) = 337.5
        Backoff backoff = Backoff.decorrelated(Duration.ofMillis(100), Duration.ofSeconds(10));

        assertThat(firstDelays(backoff, RandomSource.sequence(0.5, 0.5, 0.25), 3))
                .containsExactly(Duration.ofMillis(200), Duration.ofMillis(350), Duration.ofNanos(337_500_000));
    }

    @Test
    void decorrelatedNeverExceedsItsCap() {
        Backoff backoff = Backoff.decorrelated(Duration.ofMillis(100), Duration.ofMillis(500));

        assertThat(firstDelays(backoff, RandomSource.sequence(0.99), 20)).allSatisfy(d ->
                assertThat(d).isLessThanOrEqualTo(Duration.ofMillis(500)));
        assertThat(firstDelays(backoff, RandomSource.sequence(0.99), 20)).last().isEqualTo(Duration.ofMillis(500));
    }

    @Test
    void exponentialWithoutJitterIsTheFormulaAsWritten() {
        ExponentialBackoff backoff = Backoff.exponential(Duration.ofMillis(200)).maxDelay(Duration.ofSeconds(5));

        assertThat(backoff.jitter()).isSameAs(Jitter.none());
        assertThat(backoff.rawDelayNanos(3)).isEqualTo(Duration.ofMillis(800).toNanos());
    }

    @Test
    void settersReturnNewInstancesAndLeaveTheOriginalUnchanged() {
        ExponentialBackoff original = Backoff.exponential(Duration.ofMillis(200));

        ExponentialBackoff changed = original.multiplier(3).maxDelay(Duration.ofSeconds(1)).jitter(Jitter.full());

        assertThat(changed).isNotSameAs(original);
        assertThat(original.multiplier()).isEqualTo(2.0);
        assertThat(original.maxDelay()).isEqualTo(Duration.ofNanos(Long.MAX_VALUE));
        assertThat(original.jitter()).isSameAs(Jitter.none());
    }

    static List<Jitter> everyJitter() {
        return List.of(Jitter.none(), Jitter.full(), Jitter.equal(), Jitter.proportional(1.0),
                Jitter.proportional(0.3), Jitter.spread(1.0), Jitter.spread(0.5));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("everyJitter")
    void exponentialJitterNeverPushesAWaitPastMaxDelay(Jitter jitter) {
        Duration cap = Duration.ofSeconds(5);
        Backoff backoff = Backoff.exponential(Duration.ofMillis(200)).maxDelay(cap).jitter(jitter);

        // 0.999… is the largest draw: the one most likely to push past the ceiling.
        for (double r : new double[] {0.0, 0.5, 0.999_999}) {
            assertThat(firstDelays(backoff, RandomSource.sequence(r), 40)).allSatisfy(d ->
                    assertThat(d).isBetween(Duration.ZERO, cap));
        }
        assertThat(backoff.maxDelay()).isEqualTo(cap);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("everyJitter")
    void linearJitterNeverPushesAWaitPastMaxDelay(Jitter jitter) {
        Duration cap = Duration.ofMillis(700);
        Backoff backoff = Backoff.linear(Duration.ofMillis(300), Duration.ofMillis(200)).maxDelay(cap).jitter(jitter);

        for (double r : new double[] {0.0, 0.5, 0.999_999}) {
            assertThat(firstDelays(backoff, RandomSource.sequence(r), 20)).allSatisfy(d ->
                    assertThat(d).isBetween(Duration.ZERO, cap));
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("everyJitter")
    void fixedJitterNeverPushesAWaitPastMaxDelay(Jitter jitter) {
        Duration cap = Duration.ofMillis(1000);
        Backoff backoff = Backoff.fixed(Duration.ofMillis(1000)).maxDelay(cap).jitter(jitter);

        assertThat(firstDelays(backoff, RandomSource.sequence(0.999_999, 0.5, 0.0), 9)).allSatisfy(d ->
                assertThat(d).isBetween(Duration.ZERO, cap));
    }

    static List<Backoff> everyPreset() {
        return List.of(
                Backoff.awsFullJitter(Duration.ofMillis(100), Duration.ofSeconds(20)),
                Backoff.decorrelated(Duration.ofMillis(100), Duration.ofSeconds(20)),
                Backoff.grpcConnection(),
                Backoff.kubernetes(Duration.ofMillis(10), 5.0, 0.1, 4, Duration.ZERO),
                Backoff.kubernetes(Duration.ofSeconds(1), 2.0, 0.5, 10, Duration.ofSeconds(30)),
                Backoff.pollyDecorrelatedJitterV2(Duration.ofMillis(100), Duration.ofSeconds(20)),
                RetryPolicy.DEFAULT_BACKOFF);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("everyPreset")
    void presetsNeverExceedTheirDeclaredCeiling(Backoff backoff) {
        for (double r : new double[] {0.0, 0.5, 0.999_999}) {
            assertThat(firstDelays(backoff, RandomSource.sequence(r), 200)).allSatisfy(d ->
                    assertThat(d).isBetween(Duration.ZERO, backoff.maxDelay()));
        }
    }

    @Test
    void defaultBackoffIsExponential200MillisDoublingCappedAt5SecondsWithFullJitter() {
        ExponentialBackoff backoff = (ExponentialBackoff) RetryPolicy.DEFAULT_BACKOFF;

        assertThat(backoff.base()).isEqualTo(Duration.ofMillis(200));
        assertThat(backoff.multiplier()).isEqualTo(2.0);
        assertThat(backoff.maxDelay()).isEqualTo(Duration.ofSeconds(5));
        assertThat(backoff.jitter()).isSameAs(Jitter.full());
        assertThat(RetryPolicy.builder().build().backoff()).isSameAs(RetryPolicy.DEFAULT_BACKOFF);
    }
}
