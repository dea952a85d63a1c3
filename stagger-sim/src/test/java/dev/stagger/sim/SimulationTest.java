package dev.stagger.sim;

import static org.assertj.core.api.Assertions.assertThat;

import dev.stagger.EndReason;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class SimulationTest {

    private static final ContentionConfig SMALL = ContentionConfig.defaults().withClients(20).withRuns(3);

    @Test
    void theSameSeedGivesTheSameNumbers() {
        assertThat(Simulation.contention(SMALL)).isEqualTo(Simulation.contention(SMALL));
        OutageConfig outage = OutageConfig.defaults().withClients(10).withRuns(2).withBudget(true).withCircuitBreaker(true);
        assertThat(Simulation.outage(outage)).isEqualTo(Simulation.outage(outage));
    }

    @Test
    void anotherSeedGivesOtherNumbers() {
        List<SimulationResult> a = Simulation.contention(SMALL.withStrategies(List.of(Strategy.FULL_JITTER)));
        List<SimulationResult> b = Simulation.contention(SMALL.withSeed(2).withStrategies(List.of(Strategy.FULL_JITTER)));
        assertThat(a.get(0).calls()).isNotEqualTo(b.get(0).calls());
    }

    @Test
    void returnsOneResultPerStrategyInTheOrderAsked() {
        List<Strategy> asked = List.of(Strategy.POLLY_V2, Strategy.NONE);
        assertThat(Simulation.contention(SMALL.withStrategies(asked)))
                .extracting(SimulationResult::strategy).containsExactlyElementsOf(asked);
    }

    @Test
    void inContentionEveryClientEventuallyWritesWhenAttemptsAreUnlimited() {
        for (SimulationResult r : Simulation.contention(SMALL)) {
            assertThat(r.succeeded()).as(r.label()).isEqualTo(20L * 3);
            assertThat(r.gaveUp()).as(r.label()).isZero();
            assertThat(r.calls()).as(r.label()).isGreaterThanOrEqualTo(20);
        }
    }

    @Test
    void inContentionEveryClientFinishesOrIsCountedAsGivenUp() {
        ContentionConfig limited = SMALL.withMaxAttempts(3).withBudget(true);
        for (SimulationResult r : Simulation.contention(limited)) {
            assertThat(r.callsStarted()).isEqualTo(60);
            assertThat(r.gaveUp()).as(r.label()).isPositive();
            assertConserved(r);
        }
    }

    @Test
    void inAnOutageEveryCallFinishesOrIsCountedAsGivenUp() {
        OutageConfig config = OutageConfig.defaults().withClients(20).withRuns(2).withBudget(true).withCircuitBreaker(true);
        for (SimulationResult r : Simulation.outage(config)) {
            assertThat(r.callsStarted()).as(r.label()).isEqualTo(2L * 20 * 10 * 8);
            assertThat(r.gaveUp()).as(r.label()).isPositive();
            assertConserved(r);
        }
    }

    private static void assertConserved(SimulationResult r) {
        assertThat(r.unfinished()).as(r.label()).isZero();
        long reported = r.endReasons().values().stream().mapToLong(Long::longValue).sum();
        assertThat(reported).as("end reasons of " + r.label()).isEqualTo(r.callsStarted());
        long successes = r.endReasons().getOrDefault(EndReason.SUCCESS, 0L)
                + r.endReasons().getOrDefault(EndReason.RECOVERED, 0L);
        assertThat(successes).as(r.label()).isEqualTo(r.succeeded());
    }

    @Test
    void atOneHundredClientsFullJitterDoesLessThanHalfTheWorkOfPlainExponential() {
        Map<Strategy, SimulationResult> r = byStrategy(Simulation.contention(ContentionConfig.defaults().withRuns(20)));
        double exponential = r.get(Strategy.EXPONENTIAL).calls();
        assertThat(r.get(Strategy.FULL_JITTER).calls()).isLessThan(0.5 * exponential);
        for (Strategy jittered : List.of(Strategy.EQUAL_JITTER, Strategy.DECORRELATED_JITTER, Strategy.POLLY_V2,
                Strategy.PROPORTIONAL_JITTER)) {
            assertThat(r.get(jittered).calls()).as(jittered.label()).isLessThan(0.6 * exponential);
        }
    }

    @Test
    void atOneHundredClientsPlainExponentialTakesFarLongerToFinish() {
        Map<Strategy, SimulationResult> r = byStrategy(Simulation.contention(ContentionConfig.defaults().withRuns(20)
                .withStrategies(List.of(Strategy.EXPONENTIAL, Strategy.FULL_JITTER, Strategy.DECORRELATED_JITTER))));
        double exponential = r.get(Strategy.EXPONENTIAL).completionMs();
        assertThat(exponential).isGreaterThan(5 * r.get(Strategy.FULL_JITTER).completionMs());
        assertThat(exponential).isGreaterThan(5 * r.get(Strategy.DECORRELATED_JITTER).completionMs());
    }

    @Test
    void withoutABudgetRetriesMultiplyTheLoadWhileTheServerIsDown() {
        SimulationResult r = Simulation.outage(OutageConfig.defaults().withRuns(2)
                .withStrategies(List.of(Strategy.FULL_JITTER))).get(0);
        assertThat(r.loadDuringOutage()).isGreaterThan(2.0);
        assertThat(r.wastedCalls()).isGreaterThan(2 * r.offeredRate() * 3);
    }

    @Test
    void aBudgetKeepsTheLoadWithinTenPercentOfTheOfferedRateWhileTheServerIsDown() {
        for (SimulationResult r : Simulation.outage(OutageConfig.defaults().withRuns(2).withBudget(true))) {
            assertThat(r.loadDuringOutage()).as(r.label()).isBetween(0.9, 1.1);
            assertThat(r.endReasons()).as(r.label()).containsKey(EndReason.BUDGET);
        }
    }

    @Test
    void aBreakerStopsMostCallsFromReachingTheDownServer() {
        SimulationResult r = Simulation.outage(OutageConfig.defaults().withRuns(2).withCircuitBreaker(true)
                .withStrategies(List.of(Strategy.FULL_JITTER))).get(0);
        assertThat(r.loadDuringOutage()).isLessThan(0.5);
        assertThat(r.endReasons().get(EndReason.CIRCUIT_OPEN)).isPositive();
    }

    @Test
    void withNoOutageTheServerKeepsUpAndNothingIsWasted() {
        SimulationResult r = Simulation.outage(OutageConfig.defaults().withRuns(1)
                .withOutage(java.time.Duration.ZERO, java.time.Duration.ZERO)
                .withStrategies(List.of(Strategy.EXPONENTIAL))).get(0);
        assertThat(r.wastedCalls()).isZero();
        assertThat(r.gaveUp()).isZero();
        assertThat(r.calls()).isEqualTo(r.callsStarted());
        assertThat(r.peakLoad()).isBetween(0.8 * r.offeredRate(), 1.2 * r.offeredRate());
    }

    @Test
    void exposesTheLoadSeriesPerHundredMilliseconds() {
        SimulationResult r = Simulation.outage(OutageConfig.defaults().withRuns(1).withClients(10)
                .withStrategies(List.of(Strategy.NONE))).get(0);
        // traffic runs 8 s: at least 80 buckets, every one in requests per second
        assertThat(r.load().size()).isGreaterThanOrEqualTo(80);
        assertThat(r.load().stream().mapToDouble(Double::doubleValue).max().orElseThrow()).isEqualTo(r.peakLoad());
    }

    @Test
    void reportsHowManyEventsItSimulated() {
        SimulationResult r = Simulation.contention(SMALL.withStrategies(List.of(Strategy.NONE))).get(0);
        // per attempt at least: read arrives, write arrives, reply arrives
        assertThat(r.events()).isGreaterThanOrEqualTo(3L * Math.round(r.calls() * r.runs()));
    }

    @Test
    void tellsProgressAfterEveryRun() {
        List<int[]> seen = new java.util.ArrayList<>();
        Simulation.contention(SMALL.withStrategies(List.of(Strategy.NONE, Strategy.FULL_JITTER)),
                (done, total) -> seen.add(new int[] {done, total}));
        assertThat(seen).hasSize(6);
        assertThat(seen.get(5)).containsExactly(6, 6);
    }

    private static Map<Strategy, SimulationResult> byStrategy(List<SimulationResult> results) {
        Map<Strategy, SimulationResult> m = new java.util.EnumMap<>(Strategy.class);
        results.forEach(r -> m.put(r.strategy(), r));
        return m;
    }
}
