package dev.stagger;

import static org.assertj.core.api.Assertions.assertThat;

import dev.stagger.testing.VirtualClock;
import java.io.IOException;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.time.Duration;
import java.util.List;
import java.util.SplittableRandom;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.DoubleRange;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.Scale;
import net.jqwik.api.constraints.Size;

/** Budget and breaker arithmetic that must hold for every sequence of outcomes. */
class BudgetAndBreakerPropertiesTest {

    /**
     * Without a floor, retries granted never exceed the initial tokens plus what the successes
     * deposited, and the level stays within [0, maxTokens].
     */
    @Property
    void retriesNeverExceedInitialTokensPlusDeposits(@ForAll @Size(max = 2_000) List<Boolean> successOrRetry,
                                                     @ForAll @DoubleRange(min = 0.001, max = 1) @Scale(4) double ratio,
                                                     @ForAll @IntRange(min = 1, max = 500) int maxTokens) {
        RetryBudget budget = RetryBudget.builder("p").ratio(ratio).maxTokens(maxTokens).minRetriesPerSecond(0)
                .clock(new VirtualClock()).build();
        double deposited = budget.ratio(); // rounded down to thousandths
        long successes = 0;
        long requests = 0;
        for (boolean success : successOrRetry) {
            if (success) {
                budget.onSuccess();
                successes++;
            } else {
                budget.tryAcquireRetry();
                requests++;
            }
            assertThat(budget.tokens()).isBetween(0.0, (double) maxTokens);
        }

        assertThat((double) budget.retriesAllowed()).isLessThanOrEqualTo(maxTokens + deposited * successes + 1e-9);
        assertThat(budget.retriesAllowed() + budget.refusals()).isEqualTo(requests);
    }

    /** With the bucket empty, the floor grants at once what it holds: ceil(rate), no more. */
    @Property(tries = 200)
    void theFloorGrantsAtOnceExactlyWhatItHolds(@ForAll @IntRange(min = 1, max = 50) int perSecond,
                                               @ForAll @IntRange(min = 1, max = 200) int asks) {
        VirtualClock clock = new VirtualClock();
        RetryBudget budget = RetryBudget.builder("p").maxTokens(1).minRetriesPerSecond(perSecond).clock(clock).build();
        budget.tryAcquireRetry(); // the only token

        int granted = 0;
        for (int i = 0; i < asks; i++) {
            if (budget.tryAcquireRetry()) {
                granted++;
            }
        }

        assertThat(granted).isEqualTo(Math.min(asks, perSecond));
    }

    /**
     * The bound stated in {@link RetryBudget}'s Javadoc holds over every interval of every run:
     * retries granted between two moments are at most the level at the first moment, plus the
     * ratio times the successes recorded in between, plus ceil(r) + r × the seconds in between.
     */
    @Property(tries = 500)
    void theStatedBoundHoldsOverEveryInterval(@ForAll @Size(max = 250) List<@IntRange(min = 0, max = 9) Integer> ops,
                                              @ForAll("floors") double floor,
                                              @ForAll @IntRange(min = 1, max = 20) int maxTokens,
                                              @ForAll @IntRange(min = 1, max = 1000) int ratioThousandths,
                                              @ForAll long seed) {
        VirtualClock clock = new VirtualClock(seed % 1_000_000_000_000L);
        RetryBudget budget = RetryBudget.builder("p").maxTokens(maxTokens).ratio(ratioThousandths / 1000.0)
                .minRetriesPerSecond(floor).clock(clock).build();
        SplittableRandom random = new SplittableRandom(seed);
        int n = ops.size();
        long[] at = new long[n];
        double[] levelBefore = new double[n];
        boolean[] success = new boolean[n];
        boolean[] granted = new boolean[n];
        for (int i = 0; i < n; i++) {
            int op = ops.get(i);
            if (op == 9) {
                clock.advance(Duration.ofMillis(random.nextInt(3_000)));
            } else if (op == 8) {
                clock.advance(Duration.ofNanos(random.nextInt(2_000_000)));
            }
            at[i] = clock.nanoTime();
            levelBefore[i] = budget.tokens();
            if (op <= 1) {
                budget.onSuccess();
                success[i] = true;
            } else if (op <= 7) {
                granted[i] = budget.tryAcquireRetry();
            }
        }
        for (int i = 0; i < n; i++) {
            int grants = 0;
            int successes = 0;
            for (int j = i; j < n; j++) {
                grants += granted[j] ? 1 : 0;
                successes += success[j] ? 1 : 0;
                double seconds = (at[j] - at[i]) / 1e9;
                double bound = levelBefore[i] + budget.ratio() * successes + Math.ceil(floor) + floor * seconds;
                assertThat((double) grants).as("retries in [%d, %d] ns", at[i], at[j]).isLessThanOrEqualTo(bound + 1e-9);
            }
        }
    }

    @Provide
    Arbitrary<Double> floors() {
        return Arbitraries.of(0.0, 0.2, 1.0, 2.5, 3.0, 10.0);
    }

    private static void record(CircuitBreaker breaker, boolean failure) {
        CircuitBreaker.Permit permit = breaker.tryAcquirePermission();
        assertThat(permit.isGranted()).isTrue();
        breaker.record(permit, failure ? null : "ok", failure ? new IOException() : null);
    }

    /**
     * In rate mode, within one bucket, the breaker opens exactly at the first outcome — a success
     * as well as a failure — after which at least minimumCalls were seen and failures / calls is
     * at least the threshold, compared as exact decimals; never earlier.
     */
    @Property
    void rateModeOpensExactlyWhenTheModelSaysSo(@ForAll @Size(max = 300) List<Boolean> failures,
                                                @ForAll @DoubleRange(min = 0.01, max = 1) double threshold,
                                                @ForAll @IntRange(min = 1, max = 50) int minimumCalls) {
        CircuitBreaker breaker = CircuitBreaker.builder("p").failureRateThreshold(threshold).minimumCalls(minimumCalls)
                .clock(new VirtualClock()).build();
        BigDecimal exact = BigDecimal.valueOf(threshold);
        long calls = 0;
        long failed = 0;
        for (boolean failure : failures) {
            record(breaker, failure);
            calls++;
            failed += failure ? 1 : 0;
            boolean modelOpen = calls >= minimumCalls
                    && BigDecimal.valueOf(failed).compareTo(exact.multiply(BigDecimal.valueOf(calls))) >= 0;
            assertThat(breaker.state() == CircuitBreaker.State.OPEN).as("open after %d of %d", failed, calls)
                    .isEqualTo(modelOpen);
            if (modelOpen) {
                return;
            }
        }
    }

    /**
     * A threshold of k thousandths is reached by exactly that share: with minimumCalls c (a
     * multiple of the threshold's denominator), c - f successes then f = threshold × c failures
     * open the breaker at the last failure, and one failure fewer does not.
     */
    @Property(tries = 1_000)
    void aThresholdIsReachedByExactlyThatShareOfFailures(@ForAll @IntRange(min = 1, max = 1000) int thousandths,
                                                         @ForAll @IntRange(min = 1, max = 3) int multiple) {
        double threshold = thousandths / 1000.0;
        int calls = 1000 / BigInteger.valueOf(thousandths).gcd(BigInteger.valueOf(1000)).intValue() * multiple;
        int failures = (int) ((long) thousandths * calls / 1000);

        CircuitBreaker exactly = CircuitBreaker.builder("p").failureRateThreshold(threshold).minimumCalls(calls)
                .clock(new VirtualClock()).build();
        CircuitBreaker oneShort = CircuitBreaker.builder("p").failureRateThreshold(threshold).minimumCalls(calls)
                .clock(new VirtualClock()).build();
        for (int i = 0; i < calls - failures; i++) {
            record(exactly, false);
            record(oneShort, false);
        }
        record(oneShort, false);
        for (int i = 0; i < failures; i++) {
            assertThat(exactly.state()).isEqualTo(CircuitBreaker.State.CLOSED);
            record(exactly, true);
        }
        for (int i = 0; i < failures - 1; i++) {
            record(oneShort, true);
        }

        assertThat(exactly.state()).as("%d failures in %d calls at %s", failures, calls, threshold)
                .isEqualTo(CircuitBreaker.State.OPEN);
        assertThat(oneShort.state()).as("%d failures in %d calls at %s", failures - 1, calls, threshold)
                .isEqualTo(CircuitBreaker.State.CLOSED);
    }

    /** In the simple mode the breaker opens exactly at the N-th failure in a row. */
    @Property
    void consecutiveModeOpensExactlyAtTheNthFailureInARow(@ForAll @Size(max = 300) List<Boolean> failures,
                                                          @ForAll @IntRange(min = 1, max = 10) int n) {
        CircuitBreaker breaker = CircuitBreaker.builder("p").consecutiveFailures(n).clock(new VirtualClock()).build();
        int run = 0;
        for (boolean failure : failures) {
            record(breaker, failure);
            run = failure ? run + 1 : 0;
            assertThat(breaker.state() == CircuitBreaker.State.OPEN).isEqualTo(run >= n);
            if (run >= n) {
                return;
            }
        }
    }
}
