package dev.stagger.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import dev.stagger.sim.SimulationResult;
import java.io.PrintStream;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/** Prints {@code stagger simulate} results as a table or as JSON. */
final class SimReport implements ScenarioReport {
    private final String scenario;
    private final int clients;
    private final int runs;
    private final long seed;
    private final List<SimulationResult> results;
    private final long elapsedNanos;

    SimReport(String scenario, int clients, int runs, long seed, List<SimulationResult> results, long elapsedNanos) {
        this.scenario = scenario;
        this.clients = clients;
        this.runs = runs;
        this.seed = seed;
        this.results = results;
        this.elapsedNanos = elapsedNanos;
    }

    long events() {
        return results.stream().mapToLong(SimulationResult::events).sum();
    }

    double eventsPerSecond() {
        return events() / Math.max(1e-9, elapsedNanos / 1e9);
    }

    @Override
    public void table(PrintStream out) {
        boolean outage = scenario.equals("outage");
        out.printf(Locale.ROOT, "scenario %s: %d clients, %d runs per strategy, seed %d%n", scenario, clients, runs, seed);
        if (outage) {
            SimulationResult r = results.get(0);
            out.printf(Locale.ROOT, "offered %.0f calls/s; server down from %.1f s to %.1f s%n", r.offeredRate(),
                    r.downFromMs() / 1000, r.downToMs() / 1000);
        }
        String header = outage
                ? String.format(Locale.ROOT, "%-36s %9s %10s %8s %8s %8s %9s %9s %8s %8s",
                        "strategy", "calls", "peak/s", "x-down", "wasted", "drain", "p50", "p99", "ok", "gave-up")
                : String.format(Locale.ROOT, "%-36s %9s %11s %10s %9s %9s %8s %8s",
                        "strategy", "calls", "completion", "peak/s", "p50", "p99", "ok", "gave-up");
        out.println(header);
        for (SimulationResult r : results) {
            if (outage) {
                out.printf(Locale.ROOT, "%-36s %9.0f %10.0f %7.2fx %8.0f %8s %9s %9s %8d %8d%n", r.label(), r.calls(),
                        r.peakLoad(), r.loadDuringOutage(), r.wastedCalls(), ms(r.drainMs()), ms(r.p50Ms()),
                        ms(r.p99Ms()), r.succeeded(), r.gaveUp());
            } else {
                out.printf(Locale.ROOT, "%-36s %9.0f %11s %10.0f %9s %9s %8d %8d%n", r.label(), r.calls(),
                        ms(r.completionMs()), r.peakLoad(), ms(r.p50Ms()), ms(r.p99Ms()), r.succeeded(), r.gaveUp());
            }
        }
        if (outage) {
            out.println("calls: attempts that reached the server, per run; x-down: load while down / offered load;");
            out.println("wasted: attempts that hit the down server; drain: time after recovery until earlier calls ended;");
            out.println("p50/p99: time from a call's start until it finished; ok/gave-up: calls, summed over runs.");
        } else {
            out.println("calls: write calls per run (mean); completion: time until every client had written (mean);");
            out.println("p50/p99: time until a client's write succeeded; ok/gave-up: clients, summed over runs.");
        }
        out.printf(Locale.ROOT, "%,d simulated events in %.2f s: %,.0f events/s%n", events(), elapsedNanos / 1e9,
                eventsPerSecond());
    }

    @Override
    public void json(PrintStream out) throws Exception {
        Map<String, Object> root = new LinkedHashMap<>();
        root.put("scenario", scenario);
        root.put("clients", clients);
        root.put("runs", runs);
        root.put("seed", seed);
        root.put("events", events());
        root.put("elapsedMs", round(elapsedNanos / 1e6));
        root.put("eventsPerSecond", Math.round(eventsPerSecond()));
        root.put("results", results.stream().map(SimReport::json).toList());
        ObjectMapper mapper = new ObjectMapper().disable(SerializationFeature.FAIL_ON_EMPTY_BEANS);
        out.println(mapper.writeValueAsString(root));
    }

    private static Map<String, Object> json(SimulationResult r) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("strategy", r.label());
        m.put("backoff", r.strategy().label());
        m.put("budget", r.budget());
        m.put("breaker", r.circuitBreaker());
        m.put("calls", round(r.calls()));
        m.put("completionMs", round(r.completionMs()));
        m.put("peakLoad", round(r.peakLoad()));
        m.put("offeredRate", round(r.offeredRate()));
        m.put("loadDuringOutage", round(r.loadDuringOutage()));
        m.put("wastedCalls", round(r.wastedCalls()));
        m.put("drainMs", round(r.drainMs()));
        m.put("p50Ms", round(r.p50Ms()));
        m.put("p90Ms", round(r.p90Ms()));
        m.put("p99Ms", round(r.p99Ms()));
        m.put("callsStarted", r.callsStarted());
        m.put("succeeded", r.succeeded());
        m.put("gaveUp", r.gaveUp());
        Map<String, Long> reasons = new LinkedHashMap<>();
        r.endReasons().forEach((reason, n) -> reasons.put(reason.name(), n));
        m.put("endReasons", reasons);
        m.put("events", r.events());
        m.put("loadBucketMs", SimulationResult.BUCKET_MS);
        m.put("load", r.load().stream().map(SimReport::round).toList());
        return m;
    }

    static double round(double v) {
        return Math.round(v * 1000) / 1000.0;
    }

    static String ms(double millis) {
        return millis >= 10_000 ? String.format(Locale.ROOT, "%.1fs", millis / 1000)
                : String.format(Locale.ROOT, "%.0fms", millis);
    }
}
