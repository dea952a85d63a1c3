package dev.stagger.sim;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.Test;

/**
 * The goals of the {@code metastable} scenario, checked on the default configuration (base load
 * 90 % of capacity, half the workers gone for 10 s) with seed 1. The six set-ups run once, shared
 * by the tests.
 */
class MetastableScenarioTest {
    private static final MetastableConfig CONFIG = MetastableConfig.defaults();
    private static final Map<MetastableScenario, MetastableResult> RESULTS = new ConcurrentHashMap<>();

    private static synchronized MetastableResult result(MetastableScenario scenario) {
        if (RESULTS.isEmpty()) {
            for (MetastableResult r : Simulation.metastable(CONFIG)) {
                RESULTS.put(MetastableScenario.parse(r.setup().label()), r);
            }
        }
        return RESULTS.get(scenario);
    }

    private static double triggerSeconds() {
        return CONFIG.triggerLength().toNanos() / 1e9;
    }

    @Test
    void naiveRetriesStayCollapsedForTheRestOfTheRun() {
        MetastableResult naive = result(MetastableScenario.NAIVE);

        assertThat(naive.maxGoodputAfterTrigger()).isLessThan((int) (0.2 * CONFIG.capacity()));
        assertThat(naive.timeToRecover()).isEmpty();
    }

    @Test
    void staggersDefaultsRecoverWithinTwiceTheTriggersLengthWhereNaiveRetriesNever() {
        MetastableResult defaults = result(MetastableScenario.DEFAULTS);
        MetastableResult naive = result(MetastableScenario.NAIVE);

        assertThat(defaults.timeToRecover()).as("Stagger's defaults, with the default budget").isPresent();
        assertThat(defaults.timeToRecover().get().toNanos() / 1e9).isLessThanOrEqualTo(2 * triggerSeconds());
        assertThat(naive.timeToRecover()).as("naive retries, the contrast").isEmpty();
    }

    @Test
    void theDefaultsWithABudgetRecoverWithinTwiceTheTriggersLength() {
        MetastableResult budget = result(MetastableScenario.BUDGET);

        assertThat(budget.timeToRecover()).isPresent();
        assertThat(budget.timeToRecover().get().toNanos() / 1e9).isLessThanOrEqualTo(2 * triggerSeconds());
    }

    @Test
    void throttleAndSheddingKeepGoodputAtEightyPercentOfTheReducedCapacityDuringTheTrigger() {
        MetastableResult shedding = result(MetastableScenario.SHEDDING);

        assertThat(shedding.minGoodputDuringTrigger()).isGreaterThanOrEqualTo((int) Math.ceil(0.8 * shedding.reducedCapacity()));
    }

    @Test
    void throttleAndSheddingRecoverWithinOnePointTwoTimesTheTriggersLength() {
        MetastableResult shedding = result(MetastableScenario.SHEDDING);

        assertThat(shedding.timeToRecover()).isPresent();
        assertThat(shedding.timeToRecover().get().toNanos() / 1e9).isLessThanOrEqualTo(1.2 * triggerSeconds());
    }

    @Test
    void sheddingServesAdmittedRequestsWithoutTheQueueingDelay() {
        // 50 ms of service and two network legs of ~10 ms; a queue of 2 s would show in the p99
        assertThat(result(MetastableScenario.SHEDDING).p99LatencyMs()).isLessThan(250);
        assertThat(result(MetastableScenario.BUDGET).p99LatencyMs()).isGreaterThan(500);
    }

    @Test
    void withoutATriggerEveryClientKeepsUpWithTheOfferedLoad() {
        // the control: the collapse above is the trigger's doing, not the base load's
        List<MetastableResult> calm = Simulation.metastable(CONFIG.withTrigger(CONFIG.triggerStart(), Duration.ZERO, 0.5)
                .withDuration(Duration.ofSeconds(20)).withScenarios(List.of(MetastableScenario.NAIVE, MetastableScenario.SHEDDING)));

        for (MetastableResult r : calm) {
            assertThat(r.timeToRecover()).as(r.setup().label()).contains(Duration.ZERO);
            assertThat(r.attempts()).as(r.setup().label() + ": no retries were needed")
                    .isLessThanOrEqualTo(r.calls());
        }
    }

    @Test
    void theSameSeedGivesTheSameResults() {
        MetastableConfig short20 = CONFIG.withDuration(Duration.ofSeconds(25)).withScenarios(List.of(MetastableScenario.THROTTLE));

        MetastableResult a = Simulation.metastable(short20).get(0);
        MetastableResult b = Simulation.metastable(short20).get(0);

        assertThat(a.goodput()).isEqualTo(b.goodput());
        assertThat(a.load()).isEqualTo(b.load());
        assertThat(a.reasons()).isEqualTo(b.reasons());
    }

    @Test
    void aSetUpBuiltFromSwitchesRunsLikeTheScenarioWithTheSameGuards() {
        MetastableConfig short25 = CONFIG.withDuration(Duration.ofSeconds(25));
        MetastableSetup fromSwitches = MetastableSetup.of(MetastableSetup.Retries.DEFAULTS, true, false, false);

        MetastableResult custom = Simulation.metastable(short25, List.of(fromSwitches), (done, total) -> { }).get(0);
        MetastableResult named = Simulation.metastable(short25.withScenarios(List.of(MetastableScenario.BUDGET))).get(0);

        assertThat(custom.setup().label()).isEqualTo("defaults+budget");
        assertThat(custom.goodput()).isEqualTo(named.goodput());
    }

    @Test
    void scenariosAreFoundByLabel() {
        assertThat(MetastableScenario.parse(" Budget ")).isEqualTo(MetastableScenario.BUDGET);
        assertThatThrownBy(() -> MetastableScenario.parse("x".repeat(70)))
                .hasMessageStartingWith("scenario must be one of naive, exponential, defaults, budget, throttle, shedding, got 'xxxx")
                .hasMessageEndingWith("... (70 chars)'");
    }

    @Test
    void badConfigurationIsRejectedNamingTheField() {
        assertThatThrownBy(() -> CONFIG.withBaseLoad(0)).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("baseLoad must be in (0, 10], got 0.0");
        assertThatThrownBy(() -> CONFIG.withTrigger(Duration.ofSeconds(50), Duration.ofSeconds(20), 0.5))
                .hasMessageStartingWith("duration must reach the end of the trigger");
        assertThatThrownBy(() -> CONFIG.withTrigger(Duration.ZERO, Duration.ofSeconds(1), 1.5))
                .hasMessage("triggerCapacity must be in (0, 1], got 1.5");
        assertThatThrownBy(() -> CONFIG.withServer(1, Duration.ofMillis(50), 10)).hasMessageContaining("workers");
    }
}
