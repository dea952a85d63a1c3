package dev.stagger;

import static org.assertj.core.api.Assertions.assertThat;

import dev.stagger.testing.VirtualClock;
import java.io.IOException;
import java.util.List;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
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
        double deposited = Math.round(ratio * 1000) / 1000.0; // tokens are counted in thousandths
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

    /** With the bucket empty, exactly the floor is granted in each second. */
    @Property(tries = 200)
    void theFloorGrantsExactlyMinRetriesPerSecond(@ForAll @IntRange(min = 1, max = 50) int perSecond,
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
     * In rate mode, within one bucket, the breaker opens exactly at the first failure after which
     * at least minimumCalls were seen and failures ≥ threshold × calls — never earlier, never on a
     * success.
     */
    @Property
    void rateModeOpensExactlyWhenTheModelSaysSo(@ForAll @Size(max = 300) List<Boolean> failures,
                                                @ForAll @DoubleRange(min = 0.01, max = 1) double threshold,
                                                @ForAll @IntRange(min = 1, max = 50) int minimumCalls) {
        CircuitBreaker breaker = CircuitBreaker.builder("p").failureRateThreshold(threshold).minimumCalls(minimumCalls)
                .clock(new VirtualClock()).build();
        long calls = 0;
        long failed = 0;
        boolean modelOpen = false;
        for (boolean failure : failures) {
            breaker.record(failure ? null : "ok", failure ? new IOException() : null, -1);
            calls++;
            if (failure) {
                failed++;
                modelOpen = calls >= minimumCalls && failed >= threshold * calls;
            }
            assertThat(breaker.state() == CircuitBreaker.State.OPEN).isEqualTo(modelOpen);
            if (modelOpen) {
                return;
            }
        }
    }

    /** In the simple mode the breaker opens exactly at the N-th failure in a row. */
    @Property
    void consecutiveModeOpensExactlyAtTheNthFailureInARow(@ForAll @Size(max = 300) List<Boolean> failures,
                                                          @ForAll @IntRange(min = 1, max = 10) int n) {
        CircuitBreaker breaker = CircuitBreaker.builder("p").consecutiveFailures(n).clock(new VirtualClock()).build();
        int run = 0;
        for (boolean failure : failures) {
            breaker.record(null, failure ? new IOException() : null, -1);
            run = failure ? run + 1 : 0;
            assertThat(breaker.state() == CircuitBreaker.State.OPEN).isEqualTo(run >= n);
            if (run >= n) {
                return;
            }
        }
    }
}
