package dev.stagger.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.stagger.sim.LayersConfig;
import dev.stagger.sim.LayersResult;
import dev.stagger.sim.LayersSetup;
import java.io.PrintStream;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/** Prints {@code stagger simulate --scenario layers} results as a table or as JSON. */
final class LayersReport implements ScenarioReport {
    private final LayersConfig config;
    private final List<LayersResult> results;
    private final long elapsedNanos;

    LayersReport(LayersConfig config, List<LayersResult> results, long elapsedNanos) {
        this.config = config;
        this.results = results;
        this.elapsedNanos = elapsedNanos;
    }

    /** One line saying how the bottom fails. */
    static String failure(LayersConfig config) {
        String outage = config.outageLength().isZero() ? "" : String.format(Locale.ROOT, "down from %d s to %d s",
                config.outageStart().toSeconds(), config.outageStart().plus(config.outageLength()).toSeconds());
        String rate = config.failureRate() == 0 ? "" : String.format(Locale.ROOT, "fails %.0f %% of requests",
                100 * config.failureRate());
        return outage.isEmpty() && rate.isEmpty() ? "healthy" : outage.isEmpty() ? rate : rate.isEmpty() ? outage
                : outage + ", otherwise " + rate;
    }

    @Override
    public void table(PrintStream out) {
        out.printf(Locale.ROOT, "scenario layers: %d tiers x %d attempts (%d at the bottom if every tier retries), "
                        + "%.0f requests/s for %d s, seed %d%n", config.tiers(), config.attempts(), config.naiveFanOut(),
                config.rate(), config.duration().toSeconds(), config.seed());
        out.printf(Locale.ROOT, "the bottom: %s; users wait %d ms; network %d +- %d ms per hop%n", failure(config),
                config.userTimeout().toMillis(), config.networkMean().toMillis(), config.networkSd().toMillis());
        out.printf(Locale.ROOT, "%-10s %-29s %8s %8s %8s %6s %9s %9s %9s%n", "set-up", "guards", "bottom/r", "late/r",
                "max/r", "ok", "p50", "p90", "p99");
        for (LayersResult r : results) {
            out.printf(Locale.ROOT, "%-10s %-29s %8.1f %8.1f %8d %5.0f%% %9s %9s %9s%n", r.setup().label(),
                    guards(r.setup()), r.bottomAttemptsPerRequest(), r.lateAttemptsPerRequest(),
                    r.maxBottomAttemptsPerRequest(), 100 * r.successShare(), SimReport.ms(r.p50LatencyMs()),
                    SimReport.ms(r.p90LatencyMs()), SimReport.ms(r.p99LatencyMs()));
        }
        out.println("guards: one-layer = only the tier next to the failure retries; deadline = the user's deadline propagated;");
        out.println("budget = a retry budget per tier.");
        out.println("bottom/r: attempts reaching the bottom per request that met the failure; late/r: of those, arrived after");
        out.println("the user gave up; max/r: the most for one request; ok: requests answered with a success in time;");
        out.println("p50..p99: latency the users saw (an answer, or the whole wait when none came).");
        out.printf(Locale.ROOT, "simulated in %.2f s%n", elapsedNanos / 1e9);
    }

    /** The set-up's guards in a few words: {@code none}, or e.g. {@code one-layer, deadline, budget}. */
    static String guards(LayersSetup setup) {
        String guards = (setup.oneLayer() ? ", one-layer" : "") + (setup.deadline() ? ", deadline" : "")
                + (setup.budget() ? ", budget" : "");
        return guards.isEmpty() ? "none" : guards.substring(2);
    }

    @Override
    public void json(PrintStream out) throws Exception {
        Map<String, Object> root = new LinkedHashMap<>();
        root.put("scenario", "layers");
        root.put("seed", config.seed());
        root.put("tiers", config.tiers());
        root.put("attempts", config.attempts());
        root.put("naiveFanOut", config.naiveFanOut());
        root.put("rate", config.rate());
        root.put("durationSeconds", config.duration().toSeconds());
        root.put("outageFromSecond", config.outageStart().toSeconds());
        root.put("outageToSecond", config.outageStart().plus(config.outageLength()).toSeconds());
        root.put("failureRate", config.failureRate());
        root.put("userTimeoutMs", config.userTimeout().toMillis());
        root.put("elapsedMs", Math.round(elapsedNanos / 1e6));
        root.put("results", results.stream().map(LayersReport::json).toList());
        out.println(new ObjectMapper().writeValueAsString(root));
    }

    private static Map<String, Object> json(LayersResult r) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("setup", r.setup().label());
        m.put("description", r.setup().description());
        m.put("requests", r.requests());
        m.put("affectedRequests", r.affectedRequests());
        m.put("bottomAttemptsPerRequest", SimReport.round(r.bottomAttemptsPerRequest()));
        m.put("lateAttemptsPerRequest", SimReport.round(r.lateAttemptsPerRequest()));
        m.put("maxBottomAttemptsPerRequest", r.maxBottomAttemptsPerRequest());
        m.put("arrivalsPerRequest", r.arrivalsPerRequest().stream().map(SimReport::round).toList());
        m.put("bottomAttempts", r.bottomAttempts());
        m.put("lateAttempts", r.lateAttempts());
        m.put("succeeded", r.succeeded());
        m.put("failed", r.failed());
        m.put("timedOut", r.timedOut());
        m.put("successShare", SimReport.round(r.successShare()));
        m.put("p50Ms", SimReport.round(r.p50LatencyMs()));
        m.put("p90Ms", SimReport.round(r.p90LatencyMs()));
        m.put("p99Ms", SimReport.round(r.p99LatencyMs()));
        m.put("edgeEndReasons", reasons(r.edgeReasons()));
        m.put("innerEndReasons", reasons(r.innerReasons()));
        m.put("bottomLoad", r.bottomLoad());
        return m;
    }

    private static Map<String, Long> reasons(Map<dev.stagger.EndReason, Long> reasons) {
        Map<String, Long> m = new LinkedHashMap<>();
        reasons.forEach((reason, n) -> m.put(reason.name(), n));
        return m;
    }
}
