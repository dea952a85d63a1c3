package dev.stagger.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.stagger.sim.TailConfig;
import dev.stagger.sim.TailResult;
import java.io.PrintStream;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/** Prints {@code stagger simulate --scenario tail} results as a table or as JSON. */
final class TailReport implements ScenarioReport {
    private final TailConfig config;
    private final List<TailResult> results;
    private final long elapsedNanos;

    TailReport(TailConfig config, List<TailResult> results, long elapsedNanos) {
        this.config = config;
        this.results = results;
        this.elapsedNanos = elapsedNanos;
    }

    /** One line describing the server: its workers, service time and tail. */
    static String server(TailConfig config) {
        return String.format(Locale.ROOT, "%d workers, %d ms requests, %.0f %% of them %.0fx slower; capacity %.0f/s",
                config.workers(), config.serviceTime().toMillis(), 100 * config.tailShare(), config.tailFactor(),
                config.capacity());
    }

    @Override
    public void table(PrintStream out) {
        out.printf(Locale.ROOT, "scenario tail: %s; seed %d%n", server(config), config.seed());
        out.printf(Locale.ROOT, "calls for %d s at %.0f %% (normal) and %.0f %% (overload) of capacity; fixed delay %d ms, "
                        + "percentile p%s; network %.1f ms per hop%n", config.duration().toSeconds(), 100 * config.load(),
                100 * config.overload(), config.fixedDelay().toMillis(), SimReport.round(config.percentile()),
                config.networkMean().toNanos() / 1e6);
        out.printf(Locale.ROOT, "%-18s %-9s %9s %9s %9s %8s %8s%n", "set-up", "load", "p50", "p99", "p999", "extra", "won");
        for (TailResult r : results) {
            out.printf(Locale.ROOT, "%-18s %-9s %9s %9s %9s %7.1f%% %8d%n", r.setup().label(), r.loadLabel(),
                    SimReport.ms(r.p50Ms()), SimReport.ms(r.p99Ms()), SimReport.ms(r.p999Ms()), 100 * r.extraLoad(),
                    r.hedgesWon());
        }
        out.println("extra: requests beyond one per call, as a share of calls (hedges); won: calls a hedge answered first.");
        out.println("budget: hedges spend one shared retry budget (ratio 0.1, 100 tokens, 10/s floor), as retries do.");
        out.printf(Locale.ROOT, "simulated in %.2f s%n", elapsedNanos / 1e9);
    }

    @Override
    public void json(PrintStream out) throws Exception {
        Map<String, Object> root = new LinkedHashMap<>();
        root.put("scenario", "tail");
        root.put("seed", config.seed());
        root.put("workers", config.workers());
        root.put("serviceTimeMs", config.serviceTime().toMillis());
        root.put("tailShare", config.tailShare());
        root.put("tailFactor", config.tailFactor());
        root.put("capacity", SimReport.round(config.capacity()));
        root.put("load", config.load());
        root.put("overload", config.overload());
        root.put("durationSeconds", config.duration().toSeconds());
        root.put("fixedDelayMs", config.fixedDelay().toMillis());
        root.put("percentile", config.percentile());
        root.put("elapsedMs", Math.round(elapsedNanos / 1e6));
        root.put("results", results.stream().map(TailReport::json).toList());
        out.println(new ObjectMapper().writeValueAsString(root));
    }

    /** One result as the JSON report and the demo panel show it. */
    static Map<String, Object> json(TailResult r) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("setup", r.setup().label());
        m.put("description", r.setup().description());
        m.put("load", r.loadLabel());
        m.put("offeredRate", SimReport.round(r.offeredRate()));
        m.put("calls", r.calls());
        m.put("attempts", r.attempts());
        m.put("hedges", r.hedges());
        m.put("hedgesWon", r.hedgesWon());
        m.put("extraLoad", SimReport.round(r.extraLoad()));
        m.put("p50Ms", SimReport.round(r.p50Ms()));
        m.put("p99Ms", SimReport.round(r.p99Ms()));
        m.put("p999Ms", SimReport.round(r.p999Ms()));
        return m;
    }
}
