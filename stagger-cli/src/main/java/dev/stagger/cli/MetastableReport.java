package dev.stagger.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.stagger.sim.MetastableConfig;
import dev.stagger.sim.MetastableResult;
import java.io.PrintStream;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/** Prints {@code stagger simulate --scenario metastable} results as a table or as JSON. */
final class MetastableReport implements ScenarioReport {
    private final MetastableConfig config;
    private final List<MetastableResult> results;
    private final long elapsedNanos;

    MetastableReport(MetastableConfig config, List<MetastableResult> results, long elapsedNanos) {
        this.config = config;
        this.results = results;
        this.elapsedNanos = elapsedNanos;
    }

    @Override
    public void table(PrintStream out) {
        MetastableResult first = results.get(0);
        out.printf(Locale.ROOT, "scenario metastable: capacity %.0f/s (%d workers x %d ms, queue %d), offered %.0f calls/s, seed %d%n",
                first.capacity(), config.workers(), config.serviceTime().toMillis(), config.queueLimit(), first.offeredRate(),
                config.seed());
        out.printf(Locale.ROOT, "trigger: %.0f %% of the workers from %d s to %d s; attempts time out after %d ms%n",
                100 * first.reducedCapacity() / first.capacity(), first.triggerFromSecond(), first.triggerToSecond(),
                config.attemptTimeout().toMillis());
        out.printf(Locale.ROOT, "%-11s %-62s %9s %9s %10s %9s %9s %9s%n", "set-up", "clients", "during/s", "after/s",
                "recovered", "p99", "attempts", "ok");
        for (MetastableResult r : results) {
            out.printf(Locale.ROOT, "%-11s %-62s %9.0f %9.0f %10s %9s %9d %9d%n", r.setup().label(),
                    r.setup().description(), r.meanGoodputDuringTrigger(), r.meanGoodputAfterTrigger(),
                    r.timeToRecover().map(d -> d.toSeconds() + " s").orElse("never"), SimReport.ms(r.p99LatencyMs()), r.attempts(),
                    r.succeeded());
        }
        out.println("during/after: mean goodput (calls succeeded per second) during the trigger and after it;");
        out.printf(Locale.ROOT, "recovered: seconds after the trigger until goodput stayed at >= %.0f %% of the offered rate;%n",
                100 * MetastableResult.RECOVERED_SHARE);
        out.println("p99: time from a call's start to its success; attempts: attempts that reached the server.");
        out.printf(Locale.ROOT, "simulated in %.2f s%n", elapsedNanos / 1e9);
    }

    @Override
    public void json(PrintStream out) throws Exception {
        Map<String, Object> root = new LinkedHashMap<>();
        root.put("scenario", "metastable");
        root.put("seed", config.seed());
        root.put("capacity", config.capacity());
        root.put("workers", config.workers());
        root.put("serviceTimeMs", config.serviceTime().toMillis());
        root.put("queueLimit", config.queueLimit());
        root.put("offeredRate", config.offeredRate());
        root.put("triggerFromSecond", results.get(0).triggerFromSecond());
        root.put("triggerToSecond", results.get(0).triggerToSecond());
        root.put("reducedCapacity", results.get(0).reducedCapacity());
        root.put("attemptTimeoutMs", config.attemptTimeout().toMillis());
        root.put("elapsedMs", Math.round(elapsedNanos / 1e6));
        root.put("results", results.stream().map(MetastableReport::json).toList());
        out.println(new ObjectMapper().writeValueAsString(root));
    }

    private static Map<String, Object> json(MetastableResult r) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("setup", r.setup().label());
        m.put("description", r.setup().description());
        m.put("goodputDuringTrigger", SimReport.round(r.meanGoodputDuringTrigger()));
        m.put("minGoodputDuringTrigger", r.minGoodputDuringTrigger());
        m.put("goodputAfterTrigger", SimReport.round(r.meanGoodputAfterTrigger()));
        m.put("recoveredAfterSeconds", r.timeToRecover().map(Duration::toSeconds).orElse(null));
        m.put("p50Ms", SimReport.round(r.p50LatencyMs()));
        m.put("p99Ms", SimReport.round(r.p99LatencyMs()));
        m.put("calls", r.calls());
        m.put("succeeded", r.succeeded());
        m.put("attempts", r.attempts());
        m.put("shed", r.shed());
        m.put("dropped", r.dropped());
        Map<String, Long> reasons = new LinkedHashMap<>();
        r.reasons().forEach((reason, n) -> reasons.put(reason.name(), n));
        m.put("endReasons", reasons);
        m.put("goodput", r.goodput());
        m.put("load", r.load());
        return m;
    }
}
