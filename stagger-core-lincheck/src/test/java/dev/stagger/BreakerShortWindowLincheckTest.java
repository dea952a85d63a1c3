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
     * A clock move between the decision to trip and the clock reading at which the trip takes
     * effect neither lengthens the open period nor keeps a decision that the moved window no
     * longer supports: here the move empties the window, and the trip is decided again there.
     */
    @Test
    void aClockMoveBeforeTheTripTakesEffectIsAccountedFor() {
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

    /**
     * A thread that saw the breaker CLOSED after two clock moves puts the trip after them, where
     * the window holds one call: the breaker cannot then be found HALF_OPEN, having tripped with
     * an open period that started before those moves.
     */
    @Test
    void aTripTakesEffectAtAClockReadingMadeOnceItIsVisible() {
        explore(getClass(), Model.class, scenario(
                List.of(op("acquire", 0), op("fail", 0)),
                List.of(List.of(op("acquire", 1), op("fail", 1)), List.of(op("advance"), op("advance"), op("state"))),
                List.of(op("state"))));
    }
}
