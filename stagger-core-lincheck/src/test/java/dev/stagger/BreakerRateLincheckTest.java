package dev.stagger;

import static dev.stagger.BreakerHarness.op;
import static dev.stagger.BreakerHarness.scenario;

import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Lincheck: the failure-rate mode (at least 4 calls, 55 % failures, a 30 s window in three
 * buckets that the clock moves across), checked against {@link BreakerModel}.
 */
public class BreakerRateLincheckTest extends BreakerHarness {
    static final BreakerModel.Config CONFIG = new BreakerModel.Config(0, 0.55, 4, Duration.ofSeconds(30), 3,
            Duration.ofSeconds(10), 1, Duration.ofSeconds(10), null, 1);

    public BreakerRateLincheckTest() {
        super(CONFIG);
    }

    /** The specification for this configuration. */
    public static final class Model extends BreakerModel {
        public Model() {
            super(CONFIG);
        }
    }

    /**
     * The trip decision reads successes and failures together: the true rate here never passes
     * 3 of 6 (50 %), so no reading may show 3 failures of 5 (60 %) and trip.
     */
    @Test
    void theRateIsDecidedOnOneConsistentReading() {
        explore(getClass(), Model.class, scenario(
                List.of(op("acquire", 0), op("succeed", 0), op("acquire", 0), op("succeed", 0),
                        op("acquire", 0), op("fail", 0)),
                List.of(List.of(op("acquire", 1), op("fail", 1)),
                        List.of(op("acquire", 2), op("succeed", 2), op("acquire", 2), op("fail", 2))),
                List.of(op("state"))));
    }
}
