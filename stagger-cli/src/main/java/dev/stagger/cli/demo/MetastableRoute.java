package dev.stagger.cli.demo;

import com.fasterxml.jackson.databind.JsonNode;
import dev.stagger.sim.MetastableConfig;
import dev.stagger.sim.MetastableResult;
import dev.stagger.sim.MetastableSetup;
import dev.stagger.sim.Simulation;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.locks.ReentrantLock;
import org.jspecify.annotations.Nullable;

/**
 * Panel 7: the simulator's {@code metastable} scenario with the guards as switches — the retry
 * policy, a budget, the adaptive throttle, server shedding — run once per request on the same
 * simulator as {@code stagger simulate --scenario metastable}; the page plays the answer back
 * second by second. One simulation at a time (a naive run takes a few seconds of CPU).
 */
final class MetastableRoute {
    private final ReentrantLock oneAtATime = new ReentrantLock();

    record Answer(String setup, String description, double capacity, double reducedCapacity, double offeredRate,
                  int triggerFromSecond, int triggerToSecond, List<Integer> goodput, List<Integer> load,
                  @Nullable Long recoveredAfterSeconds, double goodputDuringTrigger, double goodputAfterTrigger, double p99Ms,
                  long attempts, long shed, long succeeded, long calls) {
    }

    Answer run(JsonNode r) {
        String retries = Json.choice(r, "retries", "defaults", "naive", "exponential", "defaults");
        boolean budget = Json.boolField(r, "budget", true);
        boolean throttle = Json.boolField(r, "throttle", false);
        boolean shedding = Json.boolField(r, "shedding", false);
        int seconds = Json.intField(r, "seconds", 40, 25, 60);
        MetastableSetup setup = MetastableSetup.of(MetastableSetup.Retries.valueOf(retries.toUpperCase(Locale.ROOT)),
                budget, throttle, shedding);
        MetastableConfig config = MetastableConfig.defaults().withDuration(Duration.ofSeconds(seconds));
        MetastableResult m;
        oneAtATime.lock();
        try {
            m = Simulation.metastable(config, List.of(setup), (done, total) -> { }).get(0);
        } finally {
            oneAtATime.unlock();
        }
        return new Answer(setup.label(), setup.description(), m.capacity(), m.reducedCapacity(), m.offeredRate(),
                m.triggerFromSecond(), m.triggerToSecond(), m.goodput(), m.load(),
                m.timeToRecover().map(Duration::toSeconds).orElse(null), m.meanGoodputDuringTrigger(),
                m.meanGoodputAfterTrigger(), m.p99LatencyMs(), m.attempts(), m.shed(), m.succeeded(), m.calls());
    }
}
