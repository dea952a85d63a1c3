package dev.stagger.sim;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;

/**
 * The simulator's exact results for a few seeded scenarios (every field of every
 * {@link SimulationResult}: calls, completion times, percentiles, load buckets, end reasons and
 * the number of events), recorded in {@code seeded-results.txt}. A change to the simulator's
 * internals (event queue, per-client state, parallel runs) must leave them identical, to the last
 * digit. On a difference the results of this build are written to
 * {@code target/seeded-results.actual.txt} for comparison.
 *
 * <p>The file was recorded before the simulator's event loop was rewritten for speed. Record it
 * again only for a change meant to alter results (for example in the retry engine's use of
 * randomness), by copying the {@code .actual.txt} file over it, and say so in the commit.
 */
class SeededResultsTest {
    private static final String RESOURCE = "seeded-results.txt";

    private static final List<Scenario> SCENARIOS = List.of(
            new Scenario("contention, 100 clients, every strategy, 3 runs",
                    () -> Simulation.contention(ContentionConfig.defaults().withRuns(3))),
            new Scenario("contention, 300 clients, budget, 2 runs, seed 7",
                    () -> Simulation.contention(ContentionConfig.defaults().withClients(300).withRuns(2).withSeed(7)
                            .withBudget(true).withStrategies(List.of(Strategy.FULL_JITTER, Strategy.EXPONENTIAL)))),
            new Scenario("contention, 100 clients, breaker, 10 attempts, 2 runs",
                    () -> Simulation.contention(ContentionConfig.defaults().withRuns(2).withCircuitBreaker(true)
                            .withMaxAttempts(10))),
            new Scenario("outage, 50 clients, every strategy, 1 run",
                    () -> Simulation.outage(OutageConfig.defaults().withClients(50).withRuns(1))),
            new Scenario("outage, 50 clients, budget and breaker, 2 runs, seed 3",
                    () -> Simulation.outage(OutageConfig.defaults().withClients(50).withRuns(2).withSeed(3)
                            .withBudget(true).withCircuitBreaker(true)
                            .withStrategies(List.of(Strategy.FULL_JITTER, Strategy.DECORRELATED_JITTER)))));

    @Test
    void seededScenariosGiveExactlyTheRecordedResults() throws IOException {
        List<String> actual = new ArrayList<>();
        for (Scenario s : SCENARIOS) {
            actual.add("# " + s.name);
            for (SimulationResult r : s.run.get()) {
                actual.add(r.toString());
            }
        }
        List<String> expected = recorded();
        if (!actual.equals(expected)) {
            Path out = Paths.get("target", "seeded-results.actual.txt");
            Files.createDirectories(out.getParent());
            Files.write(out, actual, StandardCharsets.UTF_8);
        }
        assertThat(actual).as("results of the seeded scenarios (this build's are in target/seeded-results.actual.txt)")
                .containsExactlyElementsOf(expected);
    }

    private static List<String> recorded() throws IOException {
        try (InputStream in = SeededResultsTest.class.getResourceAsStream(RESOURCE)) {
            if (in == null) {
                return List.of("(" + RESOURCE + " is missing)");
            }
            return Arrays.asList(new String(in.readAllBytes(), StandardCharsets.UTF_8).split("\n"));
        }
    }

    private static final class Scenario {
        final String name;
        final Supplier<List<SimulationResult>> run;

        Scenario(String name, Supplier<List<SimulationResult>> run) {
            this.name = name;
            this.run = run;
        }
    }
}
