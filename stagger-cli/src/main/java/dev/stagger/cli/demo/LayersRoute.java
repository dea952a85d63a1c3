package dev.stagger.cli.demo;

import com.fasterxml.jackson.databind.JsonNode;
import dev.stagger.sim.LayersConfig;
import dev.stagger.sim.LayersResult;
import dev.stagger.sim.LayersSetup;
import dev.stagger.sim.Simulation;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Panel 8: the simulator's {@code layers} scenario with the guards as switches — the one-layer
 * rule, the propagated deadline, a retry budget per tier — on a chain of tiers the page chooses,
 * run once per request on the same simulator as {@code stagger simulate --scenario layers}. One
 * simulation at a time.
 */
final class LayersRoute {
    private final ReentrantLock oneAtATime = new ReentrantLock();

    record Answer(String setup, String description, int tiers, int attempts, long naiveFanOut, String failure,
                  long userTimeoutMs, long requests, long affectedRequests, double bottomAttemptsPerRequest,
                  double lateAttemptsPerRequest, int maxBottomAttemptsPerRequest, List<Double> arrivalsPerRequest,
                  double successShare, long timedOut, double p50Ms, double p90Ms, double p99Ms,
                  List<Integer> bottomLoad) {
    }

    Answer run(JsonNode r) {
        int tiers = Json.intField(r, "tiers", 3, 1, 4);
        int attempts = Json.intField(r, "attempts", 3, 1, 5);
        boolean oneLayer = Json.boolField(r, "oneLayer", false);
        boolean deadline = Json.boolField(r, "deadline", false);
        boolean budget = Json.boolField(r, "budget", false);
        String failure = Json.choice(r, "failure", "outage", "outage", "rate");
        LayersSetup setup = LayersSetup.of(oneLayer, deadline, budget);
        LayersConfig config = LayersConfig.defaults().withChain(tiers, attempts).withSetups(List.of(setup));
        if (failure.equals("rate")) {
            config = config.withFailures(Duration.ZERO, Duration.ZERO, 0.5);
        }
        LayersResult m;
        oneAtATime.lock();
        try {
            m = Simulation.layers(config).get(0);
        } finally {
            oneAtATime.unlock();
        }
        String failing = failure.equals("rate") ? "fails half the requests"
                : "down from " + config.outageStart().toSeconds() + " s to "
                        + config.outageStart().plus(config.outageLength()).toSeconds() + " s";
        return new Answer(setup.label(), setup.description(), tiers, attempts, config.naiveFanOut(), failing,
                m.userTimeoutMs(), m.requests(), m.affectedRequests(), m.bottomAttemptsPerRequest(),
                m.lateAttemptsPerRequest(), m.maxBottomAttemptsPerRequest(), m.arrivalsPerRequest(), m.successShare(),
                m.timedOut(), m.p50LatencyMs(), m.p90LatencyMs(), m.p99LatencyMs(), m.bottomLoad());
    }
}
