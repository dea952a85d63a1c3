package dev.stagger.sim;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The shape of the {@code tail} scenario, checked on the default configuration (20 workers, 10 ms
 * requests of which 2 % are 20 times slower, 50 % load and 95 % overload for 60 s, seed 1): the
 * real hedging code on the run's virtual clock. The ten runs are made once, shared by the tests.
 */
class TailScenarioTest {
    private static final TailConfig CONFIG = TailConfig.defaults();
    private static List<TailResult> results;

    private static synchronized TailResult result(TailSetup setup, boolean overloaded) {
        if (results == null) {
            results = Simulation.tail(CONFIG);
        }
        return results.stream().filter(r -> r.setup().equals(setup) && r.overloaded() == overloaded).findFirst()
                .orElseThrow();
    }

    /** The budget's share of the calls: a token per ten successes, and the floor of 10 hedges a second. */
    private static double budgetShare(TailResult r) {
        return 0.1 + 10 / r.offeredRate();
    }

    @Test
    void withoutHedgingTheSlowTwoPercentSetTheNinetyNinthPercentile() {
        TailResult none = result(TailSetup.NONE, false);

        assertThat(none.p50Ms()).isBetween(9.0, 15.0);
        assertThat(none.p99Ms()).isGreaterThan(100.0); // a tail request: 100 to 300 ms of service
        assertThat(none.extraLoad()).isZero();
        assertThat(none.hedges()).isZero();
    }

    @Test
    void percentileHedgingCutsTheNinetyNinthPercentileByHalfForAFewPercentMoreRequests() {
        TailResult none = result(TailSetup.NONE, false);
        TailResult percentile = result(TailSetup.PERCENTILE, false);

        assertThat(percentile.p99Ms()).isLessThanOrEqualTo(0.5 * none.p99Ms());
        assertThat(percentile.p999Ms()).isLessThanOrEqualTo(0.5 * none.p999Ms());
        assertThat(percentile.extraLoad()).isBetween(0.01, 0.06); // hedging after the 95th percentile: about 5 %
        assertThat(percentile.p50Ms()).isLessThanOrEqualTo(none.p50Ms() * 1.05);
    }

    @Test
    void hedgesThatMostlyLoseStillCountAsLoad() {
        TailResult percentile = result(TailSetup.PERCENTILE, false);

        assertThat(percentile.hedges()).isGreaterThan(percentile.hedgesWon());
        assertThat(percentile.attempts() - percentile.calls()).isEqualTo(percentile.hedges());
    }

    /**
     * Near capacity the queue pushes most answers past a fixed 20 ms delay, and the hedges sent
     * then mostly lose (they queue behind the attempts they back up): the hedge credit (a hedge
     * spends one, a winning hedge earns four back) pauses hedging by itself, without a budget.
     */
    @Test
    void nearCapacityTheHedgeCreditHoldsAFixedDelayBackWithoutABudget() {
        TailResult none = result(TailSetup.NONE, true);
        TailResult fixed = result(TailSetup.FIXED, true);

        assertThat(fixed.hedgesWon()).as("most hedges lose near capacity").isLessThan(fixed.hedges() / 2);
        assertThat(fixed.extraLoad()).isLessThan(0.05);
        assertThat(fixed.p50Ms()).isLessThanOrEqualTo(1.2 * none.p50Ms());
    }

    @Test
    void theBudgetKeepsTheExtraLoadWithinItsShareUnderOverload() {
        TailResult fixed = result(TailSetup.FIXED, true);
        TailResult capped = result(TailSetup.FIXED_BUDGET, true);

        assertThat(capped.extraLoad()).isLessThanOrEqualTo(budgetShare(capped));
        assertThat(capped.extraLoad()).isLessThanOrEqualTo(fixed.extraLoad());
    }

    @Test
    void thePercentileDelayFollowsTheLoadAndStaysNearItsShareUnderOverload() {
        TailResult percentile = result(TailSetup.PERCENTILE, true);
        TailResult capped = result(TailSetup.PERCENTILE_BUDGET, true);

        assertThat(percentile.extraLoad()).isLessThan(0.1);
        assertThat(capped.extraLoad()).isLessThanOrEqualTo(budgetShare(capped));
    }

    @Test
    void theBudgetChangesNothingWhileItHasTokensToSpare() {
        TailResult fixed = result(TailSetup.FIXED, false);
        TailResult capped = result(TailSetup.FIXED_BUDGET, false);

        assertThat(capped.hedges()).isEqualTo(fixed.hedges());
        assertThat(capped.p99Ms()).isEqualTo(fixed.p99Ms());
    }

    @Test
    void theSameSeedGivesTheSameNumbers() {
        TailConfig small = CONFIG.withDuration(Duration.ofSeconds(5)).withSetups(List.of(TailSetup.PERCENTILE));

        assertThat(Simulation.tail(small)).isEqualTo(Simulation.tail(small));
        assertThat(Simulation.tail(small.withSeed(2))).isNotEqualTo(Simulation.tail(small));
    }

    @Test
    void everySetUpRunsAtBothLoadsInOrder() {
        TailConfig small = CONFIG.withDuration(Duration.ofSeconds(2)).withSetups(List.of(TailSetup.NONE, TailSetup.FIXED));

        assertThat(Simulation.tail(small)).extracting(r -> r.setup().label() + " " + r.loadLabel())
                .containsExactly("none normal", "fixed normal", "none overload", "fixed overload");
    }

    @Test
    void capacityCountsTheTail() {
        // 20 workers, mean service 10 ms x (0.98 + 0.02 x 20) = 13.8 ms
        assertThat(CONFIG.capacity()).isCloseTo(20 / 0.0138, org.assertj.core.data.Offset.offset(0.01));
    }

    @Test
    void rejectsBadValuesNamingTheField() {
        assertThatThrownBy(() -> CONFIG.withTail(1, 20)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("tailShare must be in [0, 1), got 1");
        assertThatThrownBy(() -> CONFIG.withTail(0.02, 0.5)).hasMessageStartingWith("tailFactor");
        assertThatThrownBy(() -> CONFIG.withLoads(1, 1.5)).hasMessageStartingWith("load must be in (0, 1), got 1");
        assertThatThrownBy(() -> CONFIG.withLoads(0.5, 3)).hasMessageStartingWith("overload must be in (0, 2], got 3");
        assertThatThrownBy(() -> CONFIG.withDelays(Duration.ZERO, 95)).hasMessageStartingWith("fixedDelay");
        assertThatThrownBy(() -> CONFIG.withDelays(Duration.ofMillis(20), 100)).hasMessageStartingWith("percentile");
        assertThatThrownBy(() -> CONFIG.withSetups(List.of())).hasMessageStartingWith("setups must not be empty");
    }

    @Test
    void setUpsAreFoundByLabel() {
        assertThat(TailSetup.parse(" Percentile+Budget ")).isEqualTo(TailSetup.PERCENTILE_BUDGET);
        assertThatThrownBy(() -> TailSetup.parse("sometimes")).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("set-up must be one of none, fixed, fixed+budget, percentile, percentile+budget, got 'sometimes'");
    }
}
