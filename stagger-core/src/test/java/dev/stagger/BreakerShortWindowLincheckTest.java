package dev.stagger;

import static dev.stagger.BreakerHarness.op;
import static dev.stagger.BreakerHarness.scenario;

import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Lincheck: the failure-rate mode with a window of one 5 s bucket and clock moves of 5 s, so that
 * every move empties the window, checked against {@link BreakerModel}.
 */
public class BreakerShortWindowLincheckTest extends BreakerHarness {
    static final BreakerModel.Config CONFIG = new BreakerModel.Config(0, 0.5, 2, Duration.ofSeconds(5), 1,
            Duration.ofSeconds(10), 1, Duration.ofSeconds(5), null, 1);

    public BreakerShortWindowLincheckTest() {
        super(CONFIG);
    }

    /** The specification for this configuration. */
    public static final class Model extends BreakerModel {
        public Model() {
            super(CONFIG);
        }
    }

    /**
     * The open period starts at the clock reading of the decision to trip, not at a reading taken
     * afterwards: a clock move between the two must not lengthen it.
     */
    @Test
    void theOpenPeriodStartsAtTheDecision() {
        explore(getClass(), Model.class, scenario(
                List.of(op("acquire", 0), op("fail", 0)),
                List.of(List.of(op("acquire", 1), op("fail", 1)), List.of(op("advance"))),
                List.of(op("advance"), op("state"))));
    }

    /** {@code metrics()} is one reading: never the counts of the closed state with the state OPEN. */
    @Test
    void metricsAreOneReading() {
        explore(getClass(), Model.class, scenario(
                List.of(op("acquire", 0), op("fail", 0)),
                List.of(List.of(op("acquire", 1), op("fail", 1)), List.of(op("metrics"))),
                List.of()));
    }
}
