package dev.stagger;

import static dev.stagger.BreakerHarness.op;
import static dev.stagger.BreakerHarness.scenario;

import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Lincheck: two failures in a row open the breaker, two probes must succeed to close it, and each
 * re-open in a row lasts the next wait of one decorrelated-jitter schedule (seeded), checked
 * against {@link BreakerModel}.
 */
public class BreakerTwoProbesLincheckTest extends BreakerHarness {
    static final BreakerModel.Config CONFIG = new BreakerModel.Config(2, 0, 0, Duration.ofSeconds(30), 10,
            Duration.ofSeconds(10), 2, Duration.ofSeconds(10),
            () -> Backoff.decorrelated(Duration.ofSeconds(5), Duration.ofSeconds(60)), 7);

    public BreakerTwoProbesLincheckTest() {
        super(CONFIG);
    }

    /** The specification for this configuration. */
    public static final class Model extends BreakerModel {
        public Model() {
            super(CONFIG);
        }
    }

    /**
     * The failure that reaches the count trips the breaker in the same step: a success cannot
     * reset the count, and a call cannot be admitted, between the decision and the switch to OPEN.
     */
    @Test
    void theDecisionToTripAndTheSwitchToOpenAreOneStep() {
        explore(getClass(), Model.class, scenario(
                List.of(op("acquire", 0), op("fail", 0), op("acquire", 2)),
                List.of(List.of(op("acquire", 1), op("fail", 1)), List.of(op("succeed", 2), op("acquire", 3))),
                List.of(op("state"))));
    }
}
