package dev.stagger.cli.demo;

import com.fasterxml.jackson.databind.JsonNode;
import dev.stagger.sim.Simulation;
import dev.stagger.sim.TailConfig;
import dev.stagger.sim.TailResult;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Panel 9: the simulator's {@code tail} scenario — no hedging, a fixed delay and a percentile of
 * recent latencies, each with and without a retry budget, at normal load and near capacity — on
 * a tail the page chooses, run once per request on the same simulator as
 * {@code stagger simulate --scenario tail} (20 simulated seconds, to answer within a second or
 * two). One simulation at a time.
 */
final class TailRoute {
    /** Simulated seconds per run: the tail's percentiles settle well before. */
    private static final Duration DURATION = Duration.ofSeconds(20);

    private final ReentrantLock oneAtATime = new ReentrantLock();

    record Row(String setup, String description, String load, double offeredRate, long calls, long hedges,
               long hedgesWon, double extraLoad, double p50Ms, double p99Ms, double p999Ms) {
    }

    record Answer(int workers, long serviceTimeMs, double tailShare, double tailFactor, double capacity, double load,
                  double overload, long fixedDelayMs, double percentile, long seconds, List<Row> rows) {
    }

    Answer run(JsonNode r) {
        double share = Json.doubleField(r, "tailShare", 0.02, 0, 0.2);
        double factor = Json.doubleField(r, "tailFactor", 20, 1, 50);
        TailConfig config = TailConfig.defaults().withTail(share, factor).withDuration(DURATION);
        List<TailResult> results;
        oneAtATime.lock();
        try {
            results = Simulation.tail(config);
        } finally {
            oneAtATime.unlock();
        }
        List<Row> rows = results.stream().map(m -> new Row(m.setup().label(), m.setup().description(), m.loadLabel(),
                m.offeredRate(), m.calls(), m.hedges(), m.hedgesWon(), m.extraLoad(), m.p50Ms(), m.p99Ms(), m.p999Ms()))
                .toList();
        return new Answer(config.workers(), config.serviceTime().toMillis(), share, factor, config.capacity(),
                config.load(), config.overload(), config.fixedDelay().toMillis(), config.percentile(),
                DURATION.toSeconds(), rows);
    }
}
