package dev.stagger.sim;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.api.Test;

/**
 * The goals of the {@code layers} scenario, checked on the default configuration (3 tiers of 3
 * attempts, the bottom down from 5 s to 25 s, users waiting 2 s) with seed 1. The four presets run
 * once, shared by the tests.
 */
class LayersScenarioTest {
    private static final LayersConfig CONFIG = LayersConfig.defaults();
    private static final Map<String, LayersResult> RESULTS = new ConcurrentHashMap<>();

    private static synchronized LayersResult result(LayersSetup setup) {
        if (RESULTS.isEmpty()) {
            for (LayersResult r : Simulation.layers(CONFIG)) {
                RESULTS.put(r.setup().label(), r);
            }
        }
        return RESULTS.get(setup.label());
    }

    @Test
    void naiveRetriesMultiplyToAttemptsToThePowerOfTiersAtTheBottom() {
        LayersResult naive = result(LayersSetup.NAIVE);

        assertThat(naive.maxBottomAttemptsPerRequest()).isEqualTo(27);
        // requests that met the outage early make all 27; those near its end stop when it ends
        assertThat(naive.bottomAttemptsPerRequest()).isBetween(0.85 * 27, 27.0);
        assertThat(naive.arrivalsPerRequest().get(1)).isGreaterThan(2.5);
        assertThat(naive.arrivalsPerRequest().get(2)).isGreaterThan(7.5);
    }

    @Test
    void withoutADeadlineAboutHalfOfThoseAttemptsReachTheBottomAfterTheUserGaveUp() {
        LayersResult naive = result(LayersSetup.NAIVE);

        assertThat(naive.lateAttemptsPerRequest()).isBetween(0.4 * naive.bottomAttemptsPerRequest(),
                0.7 * naive.bottomAttemptsPerRequest());
        assertThat(naive.timedOut()).isGreaterThan(naive.affectedRequests() / 2);
    }

    @Test
    void staggersGuardsMakeAtMostOneLayersAttemptsAtTheBottomAndNoneAfterTheUserGaveUp() {
        LayersResult guarded = result(LayersSetup.STAGGER);

        assertThat(guarded.maxBottomAttemptsPerRequest()).isLessThanOrEqualTo(CONFIG.attempts());
        assertThat(guarded.bottomAttemptsPerRequest()).isLessThan(CONFIG.attempts());
        assertThat(guarded.lateAttempts()).isZero();
        // only the tier next to the failure retried: one attempt reached every tier above the bottom
        for (int tier = 0; tier < CONFIG.tiers(); tier++) {
            assertThat(guarded.arrivalsPerRequest().get(tier)).isEqualTo(1.0);
        }
        // the budget refused retries: fewer attempts than the one-layer rule alone
        assertThat(guarded.innerReasons()).containsKey(dev.stagger.EndReason.BUDGET);
        assertThat(guarded.bottomAttemptsPerRequest()).isLessThan(result(LayersSetup.ONE_LAYER).bottomAttemptsPerRequest());
    }

    @Test
    void eachGuardAloneCutsTheMultiplication() {
        LayersResult naive = result(LayersSetup.NAIVE);
        LayersResult deadline = result(LayersSetup.DEADLINE);
        LayersResult oneLayer = result(LayersSetup.ONE_LAYER);

        assertThat(deadline.lateAttempts()).isZero();
        assertThat(deadline.bottomAttemptsPerRequest()).isLessThan(0.6 * naive.bottomAttemptsPerRequest());
        assertThat(oneLayer.maxBottomAttemptsPerRequest()).isEqualTo(CONFIG.attempts());
        assertThat(oneLayer.bottomAttemptsPerRequest()).isBetween(0.95 * CONFIG.attempts(), (double) CONFIG.attempts());
    }

    @Test
    void theGuardedUserHearsSoonerAndRequestsOutsideTheOutageSucceedEitherWay() {
        LayersResult naive = result(LayersSetup.NAIVE);
        LayersResult guarded = result(LayersSetup.STAGGER);

        assertThat(guarded.p99LatencyMs()).isLessThan(naive.p99LatencyMs() / 2);
        assertThat(guarded.timedOut()).isZero();
        // the 200 requests outside the outage succeed whatever the guards
        assertThat(guarded.succeeded()).isGreaterThanOrEqualTo(guarded.requests() - guarded.affectedRequests());
        assertThat(naive.succeeded()).isGreaterThanOrEqualTo(naive.requests() - naive.affectedRequests());
    }

    @ParameterizedTest
    @CsvSource({"1, 3", "2, 4", "4, 2", "3, 3"})
    void everyChainMultipliesWithoutGuardsAndNotWithThem(int tiers, int attempts) {
        LayersConfig config = CONFIG.withChain(tiers, attempts).withTraffic(5, Duration.ofSeconds(10))
                .withFailures(Duration.ZERO, Duration.ofSeconds(30), 0).withUserTimeout(Duration.ofSeconds(3))
                .withSetups(List.of(LayersSetup.NAIVE, LayersSetup.STAGGER));
        List<LayersResult> results = Simulation.layers(config);

        long fanOut = Math.round(Math.pow(attempts, tiers));
        assertThat(results.get(0).maxBottomAttemptsPerRequest()).isEqualTo(fanOut);
        assertThat(results.get(0).bottomAttemptsPerRequest()).isEqualTo((double) fanOut);
        assertThat(results.get(1).maxBottomAttemptsPerRequest()).isLessThanOrEqualTo(attempts);
        assertThat(results.get(1).lateAttempts()).isZero();
    }

    @Test
    void underAFailureRateTheGuardedChainStillRetriesOnlyNextToTheFailure() {
        LayersConfig config = CONFIG.withFailures(Duration.ZERO, Duration.ZERO, 0.5)
                .withSetups(List.of(LayersSetup.NAIVE, LayersSetup.STAGGER));
        List<LayersResult> results = Simulation.layers(config);

        assertThat(results.get(0).affectedRequests()).isEqualTo(results.get(0).requests());
        assertThat(results.get(0).maxBottomAttemptsPerRequest()).isGreaterThan(CONFIG.attempts());
        assertThat(results.get(1).maxBottomAttemptsPerRequest()).isLessThanOrEqualTo(CONFIG.attempts());
        assertThat(results.get(1).lateAttempts()).isZero();
        assertThat(results.get(1).succeeded()).isPositive();
    }

    @Test
    void aHealthyBottomMakesOneAttemptPerRequestWhateverTheGuards() {
        LayersConfig config = CONFIG.withFailures(Duration.ZERO, Duration.ZERO, 0).withTraffic(20, Duration.ofSeconds(5));
        for (LayersResult r : Simulation.layers(config)) {
            assertThat(r.bottomAttemptsPerRequest()).as(r.setup().label()).isEqualTo(1.0);
            assertThat(r.succeeded()).as(r.setup().label()).isEqualTo(r.requests()).isEqualTo(100);
            assertThat(r.lateAttempts()).as(r.setup().label()).isZero();
        }
    }

    @Test
    void theSameSeedGivesTheSameNumbersAndAnotherSeedOthers() {
        LayersConfig config = CONFIG.withTraffic(20, Duration.ofSeconds(10)).withFailures(Duration.ofSeconds(2),
                Duration.ofSeconds(5), 0.1);
        List<String> first = Simulation.layers(config).stream().map(LayersScenarioTest::everything).toList();
        List<String> again = Simulation.layers(config).stream().map(LayersScenarioTest::everything).toList();
        List<String> other = Simulation.layers(config.withSeed(2)).stream().map(LayersScenarioTest::everything).toList();

        assertThat(again).isEqualTo(first);
        assertThat(other).isNotEqualTo(first);
    }

    private static String everything(LayersResult r) {
        return r + " " + r.arrivalsPerRequest() + " " + r.bottomLoad() + " " + r.p50LatencyMs() + " " + r.p90LatencyMs()
                + " " + r.succeeded() + " " + r.failed() + " " + r.timedOut() + " " + r.lateAttempts() + " "
                + r.edgeReasons() + " " + r.innerReasons();
    }

    @Test
    void badConfigurationsNameTheFieldAndTheValue() {
        assertThatThrownBy(() -> CONFIG.withChain(0, 3)).hasMessage("tiers must be at least 1, got 0");
        assertThatThrownBy(() -> CONFIG.withChain(7, 2)).hasMessage("tiers must be at most 6, got 7");
        assertThatThrownBy(() -> CONFIG.withChain(3, 11)).hasMessage("attempts must be at most 10, got 11");
        assertThatThrownBy(() -> CONFIG.withChain(5, 5)).hasMessage("attempts^tiers must be at most 1024, got 5^5");
        assertThatThrownBy(() -> CONFIG.withTraffic(0, Duration.ofSeconds(1))).hasMessage("rate must be in (0, 1000], got 0.0");
        assertThatThrownBy(() -> CONFIG.withFailures(Duration.ZERO, Duration.ZERO, 1.5))
                .hasMessage("failureRate must be in [0, 1], got 1.5");
        assertThatThrownBy(() -> CONFIG.withSetups(List.of())).hasMessageStartingWith("setups must not be empty");
        assertThatThrownBy(() -> LayersSetup.parse("everything"))
                .hasMessage("set-up must be one of naive, deadline, one-layer, stagger, got 'everything'");
    }

    @Test
    void setupsAreNamedAfterTheirGuards() {
        assertThat(LayersSetup.of(true, true, true)).isSameAs(LayersSetup.STAGGER);
        assertThat(LayersSetup.of(false, false, false)).isSameAs(LayersSetup.NAIVE);
        assertThat(LayersSetup.of(false, true, true).label()).isEqualTo("deadline+budget");
        assertThat(LayersSetup.of(false, false, true).description()).isEqualTo("a retry budget per tier");
        assertThat(LayersSetup.parse(" One-Layer ")).isSameAs(LayersSetup.ONE_LAYER);
    }
}
