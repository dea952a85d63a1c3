package dev.stagger.cli.demo;

import com.fasterxml.jackson.databind.JsonNode;
import dev.stagger.sim.ContentionConfig;
import dev.stagger.sim.OutageConfig;
import dev.stagger.sim.Simulation;
import dev.stagger.sim.SimulationResult;
import dev.stagger.sim.Strategy;
import java.util.ArrayList;
import java.util.List;

/**
 * Panel 2: the simulator (real backoff code on a virtual clock). Bars: the AWS contention model;
 * lines: load on a server through an outage, without jitter, with jitter, and with a budget.
 */
final class HerdRoute implements DemoRoute {
    private static final List<Strategy> COMPARED = List.of(Strategy.NONE, Strategy.EXPONENTIAL, Strategy.FULL_JITTER,
            Strategy.EQUAL_JITTER, Strategy.DECORRELATED_JITTER);

    record Row(String strategy, double calls, double completionMs) {
    }

    record Series(String strategy, int bucketMs, List<Double> points) {
    }

    record Answer(int clients, int runs, List<Row> results, List<Series> load, long events) {
    }

    @Override
    public Answer handle(JsonNode r) {
        int clients = Json.intField(r, "clients", 100, 2, 500);
        int runs = Json.intField(r, "runs", 5, 1, 50);
        long seed = Json.intField(r, "seed", 1, 0, Integer.MAX_VALUE);
        long events = 0;
        List<Row> rows = new ArrayList<>();
        for (SimulationResult s : Simulation.contention(ContentionConfig.defaults().withClients(clients).withRuns(runs)
                .withSeed(seed).withStrategies(COMPARED))) {
            rows.add(new Row(s.label(), s.calls(), s.completionMs()));
            events += s.events();
        }
        List<Series> load = new ArrayList<>();
        OutageConfig outage = OutageConfig.defaults().withClients(clients).withRuns(1).withSeed(seed)
                .withStrategies(List.of(Strategy.EXPONENTIAL, Strategy.FULL_JITTER));
        List<SimulationResult> plain = Simulation.outage(outage);
        List<SimulationResult> budgeted = Simulation.outage(outage.withStrategies(List.of(Strategy.FULL_JITTER)).withBudget(true));
        for (SimulationResult s : concat(plain, budgeted)) {
            load.add(new Series(s.label() + " (outage)", SimulationResult.BUCKET_MS, s.load()));
            events += s.events();
        }
        return new Answer(clients, runs, rows, load, events);
    }

    private static List<SimulationResult> concat(List<SimulationResult> a, List<SimulationResult> b) {
        List<SimulationResult> all = new ArrayList<>(a);
        all.addAll(b);
        return all;
    }
}
