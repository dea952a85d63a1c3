package dev.stagger;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.Tuple;
import net.jqwik.api.constraints.DoubleRange;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.LongRange;

/** Delay arithmetic that must hold for every valid configuration and every retry number. */
class BackoffPropertiesTest {

    @Property
    void exponentialDelayIsWithinZeroAndMaxDelayForAnyRetry(@ForAll("exponentials") Backoff backoff,
                                                            @ForAll @IntRange(min = 1) int retry,
                                                            @ForAll @DoubleRange(min = 0, max = 1, maxIncluded = false) double r) {
        assertWithinCeiling(backoff, retry, r);
    }

    @Property
    void linearDelayIsWithinZeroAndMaxDelayForAnyRetry(@ForAll("linears") Backoff backoff,
                                                       @ForAll @IntRange(min = 1) int retry,
                                                       @ForAll @DoubleRange(min = 0, max = 1, maxIncluded = false) double r) {
        assertWithinCeiling(backoff, retry, r);
    }

    @Property
    void presetDelayIsWithinZeroAndMaxDelayForAnyRetry(@ForAll("presets") Backoff backoff,
                                                       @ForAll @IntRange(min = 1) int retry,
                                                       @ForAll @DoubleRange(min = 0, max = 1, maxIncluded = false) double r) {
        assertWithinCeiling(backoff, retry, r);
    }

    @Property
    void exponentialDelayNeverShrinksAsRetriesGrowWithoutJitter(@ForAll @LongRange(min = 1, max = 3_600_000_000_000L) long baseNanos,
                                                                @ForAll @DoubleRange(min = 1, max = 100) double multiplier,
                                                                @ForAll @IntRange(min = 1, max = Integer.MAX_VALUE - 1) int retry) {
        Backoff.Schedule schedule = Backoff.exponential(Duration.ofNanos(baseNanos)).multiplier(multiplier)
                .start(RandomSource.threadLocal());

        assertThat(schedule.nextDelayNanos(retry + 1)).isGreaterThanOrEqualTo(schedule.nextDelayNanos(retry));
    }

    @Property(tries = 200)
    void statefulSchedulesStayWithinTheCeilingOverLongRuns(@ForAll("presets") Backoff backoff,
                                                           @ForAll @LongRange(min = 0) long seed) {
        Backoff.Schedule schedule = backoff.start(RandomSource.seeded(seed));
        long ceiling = backoff.maxDelay().toNanos();
        for (int retry = 1; retry <= 2_000; retry++) {
            assertThat(schedule.nextDelayNanos(retry)).isBetween(0L, ceiling);
        }
    }

    /**
     * Work that outlives a process stores {@link Backoff.Schedule#state()} after each retry and
     * resumes from it: the delays must go on exactly as in one uninterrupted schedule.
     */
    @Property(tries = 300)
    void aResumedScheduleContinuesAsTheUninterruptedOne(@ForAll("carried") Backoff backoff,
                                                        @ForAll @LongRange(min = 0) long seed,
                                                        @ForAll @IntRange(min = 0, max = 40) int before) {
        int total = before + 20;
        Backoff.Schedule whole = backoff.start(RandomSource.seeded(seed));
        long[] expected = new long[total + 1];
        for (int retry = 1; retry <= total; retry++) {
            expected[retry] = whole.nextDelayNanos(retry);
        }

        RandomSource random = RandomSource.seeded(seed);
        Backoff.Schedule first = backoff.start(random);
        for (int retry = 1; retry <= before; retry++) {
            assertThat(first.nextDelayNanos(retry)).isEqualTo(expected[retry]);
        }
        long state = first.state();
        for (int retry = before + 1; retry <= total; retry++) {
            Backoff.Schedule resumed = backoff.resume(random, state); // a new process for every attempt
            assertThat(resumed.nextDelayNanos(retry)).as("retry %d", retry).isEqualTo(expected[retry]);
            state = resumed.state();
        }
    }

    private static void assertWithinCeiling(Backoff backoff, int retry, double r) {
        long ceiling = backoff.maxDelay().toNanos();
        Backoff.Schedule schedule = backoff.start(RandomSource.sequence(r));

        long first = schedule.nextDelayNanos(retry);
        long again = schedule.nextDelayNanos(retry);

        assertThat(first).isBetween(0L, ceiling);
        assertThat(again).isBetween(0L, ceiling);
    }

    @Provide
    Arbitrary<Backoff> exponentials() {
        return Combinators.combine(durations(), Arbitraries.doubles().between(1.0, 1e6).injectDuplicates(0.1)
                        .edgeCases(c -> c.add(1.0)), durations().injectNull(0.3), jitters())
                .as((base, multiplier, cap, jitter) -> {
                    ExponentialBackoff b = Backoff.exponential(base).multiplier(multiplier).jitter(jitter);
                    return cap == null ? b : b.maxDelay(cap);
                });
    }

    @Provide
    Arbitrary<Backoff> linears() {
        return Combinators.combine(durations(), durations(), durations().injectNull(0.3), jitters())
                .as((initial, step, cap, jitter) -> {
                    LinearBackoff b = Backoff.linear(initial, step).jitter(jitter);
                    return cap == null ? b : b.maxDelay(cap);
                });
    }

    @Provide
    Arbitrary<Backoff> presets() {
        Arbitrary<Backoff> awsFull = Combinators.combine(durations(), durations()).as(Backoff::awsFullJitter);
        return Arbitraries.oneOf(decorrelated(), grpc(), kubernetes(), polly(), awsFull);
    }

    private static Arbitrary<Backoff> kubernetes() {
        Arbitrary<Duration> small = Arbitraries.longs().between(1, 1_000).map(Duration::ofNanos);
        return Combinators.combine(Arbitraries.oneOf(durations(), small), Arbitraries.doubles().between(0, 1e3),
                        Arbitraries.doubles().between(0, 10), Arbitraries.integers().between(0, 100),
                        Arbitraries.oneOf(durations(), small).injectNull(0.3))
                .as((d, factor, jitter, steps, cap) ->
                        Backoff.kubernetes(d, factor, jitter, steps, cap == null ? Duration.ZERO : cap));
    }

    private static Arbitrary<Backoff> decorrelated() {
        return Combinators.combine(durations(), durations()).as((a, b) -> Backoff.decorrelated(min(a, b), max(a, b)));
    }

    private static Arbitrary<Backoff> grpc() {
        return Combinators.combine(durations(), Arbitraries.doubles().between(1.0, 1e3),
                        Arbitraries.doubles().between(0, 1), durations())
                .as(Backoff::grpcConnection);
    }

    private static Arbitrary<Backoff> polly() {
        return Combinators.combine(durations(), durations()).as(Backoff::pollyDecorrelatedJitterV2);
    }

    /** Every built-in backoff whose schedule can be carried between processes. */
    @Provide
    Arbitrary<Backoff> carried() {
        Arbitrary<Backoff> fixed = Combinators.combine(durations(), jitters()).as((d, j) -> Backoff.fixed(d).jitter(j));
        return Arbitraries.oneOf(exponentials(), linears(), fixed, decorrelated(), grpc(), polly(), kubernetes());
    }

    /**
     * From one nanosecond to the ~292 years a long holds, plus a thousand years (more than a long
     * of nanoseconds: it must saturate, not overflow).
     */
    private static Arbitrary<Duration> durations() {
        return Arbitraries.frequencyOf(
                Tuple.of(20, Arbitraries.longs().between(1, Long.MAX_VALUE).map(Duration::ofNanos)),
                Tuple.of(1, Arbitraries.just(Duration.ofDays(365_000))));
    }

    private static Arbitrary<Jitter> jitters() {
        Arbitrary<Double> factor = Arbitraries.doubles().between(0, 1);
        return Arbitraries.oneOf(Arbitraries.of(Jitter.none(), Jitter.full(), Jitter.equal()),
                factor.map(Jitter::proportional), factor.map(Jitter::spread));
    }

    private static Duration min(Duration a, Duration b) {
        return a.compareTo(b) <= 0 ? a : b;
    }

    private static Duration max(Duration a, Duration b) {
        return a.compareTo(b) >= 0 ? a : b;
    }
}
