package dev.stagger;

import static dev.stagger.BreakerHarness.op;
import static dev.stagger.BreakerHarness.scenario;

import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Lincheck: the failure-rate mode of {@link BreakerRateLincheckTest} with every bucket counting
 * successes in its cells from the start, as a contended bucket does, checked against
 * {@link BreakerModel}: a success counted in a cell is never lost, never counted twice, and is
 * part of every exact reading (a decision close to the threshold, the window moving, metrics).
 */
public class BreakerCellsLincheckTest extends BreakerHarness {
    static final BreakerModel.Config CONFIG = BreakerRateLincheckTest.CONFIG;

    public BreakerCellsLincheckTest() {
        super(CONFIG, CircuitBreaker.Builder::cellsFromStart);
    }

    /** The specification for this configuration. */
    public static final class Model extends BreakerModel {
        public Model() {
            super(CONFIG);
        }
    }

    /**
     * Successes in cells while failures decide close to the threshold: the true rate never passes
     * 3 of 6 (50 %), so no decision may miss a success that was counted and trip on 3 of 5.
     */
    @Test
    void aDecisionCloseToTheThresholdCountsEverySuccessInTheCells() {
        explore(getClass(), Model.class, scenario(
                List.of(op("acquire", 0), op("succeed", 0), op("acquire", 0), op("succeed", 0),
                        op("acquire", 0), op("fail", 0)),
                List.of(List.of(op("acquire", 1), op("fail", 1)),
                        List.of(op("acquire", 2), op("succeed", 2), op("acquire", 2), op("fail", 2))),
                List.of(op("state"), op("metrics"))));
    }

    /**
     * A success can trip the breaker: once the four successes of the first period leave the
     * window, 3 failures and a success remain, and the next success makes 3 of 5 (60 %).
     * Counting it in a cell must not skip that decision.
     */
    @Test
    void aSuccessCanTripWhenTheWindowMovedOn() {
        explore(getClass(), Model.class, scenario(
                List.of(op("acquire", 0), op("succeed", 0), op("acquire", 0), op("succeed", 0), op("acquire", 0),
                        op("succeed", 0), op("acquire", 0), op("succeed", 0), op("advance"),
                        op("acquire", 0), op("fail", 0), op("acquire", 0), op("fail", 0), op("acquire", 0),
                        op("fail", 0), op("acquire", 0), op("succeed", 0), op("advance"), op("advance")),
                List.of(List.of(op("acquire", 1), op("succeed", 1)), List.of(op("acquire", 2), op("succeed", 2))),
                List.of(op("state"), op("metrics"))));
    }

    /** Metrics freeze the cells and read them exactly while successes keep arriving. */
    @Test
    void metricsReadTheCellsExactlyWhileSuccessesArrive() {
        explore(getClass(), Model.class, scenario(
                List.of(op("acquire", 0), op("fail", 0)),
                List.of(List.of(op("acquire", 1), op("succeed", 1), op("acquire", 1), op("succeed", 1)),
                        List.of(op("metrics"), op("acquire", 2), op("fail", 2))),
                List.of(op("metrics"))));
    }

    /**
     * A reading that froze the cells starts a new bucket of the same period, which must carry the
     * frozen successes: a later reading, after the clock moved on, still counts them.
     */
    @Test
    void aNewBucketOfTheSamePeriodCarriesTheFrozenSuccesses() {
        explore(getClass(), Model.class, scenario(
                List.of(op("acquire", 0), op("succeed", 0), op("acquire", 0), op("succeed", 0),
                        op("acquire", 0), op("fail", 0)),
                List.of(List.of(op("metrics")), List.of(op("acquire", 1), op("succeed", 1))),
                List.of(op("advance"), op("metrics"), op("acquire", 0), op("fail", 0), op("metrics"))));
    }

    /** Successes counted in cells move with the window into the sealed buckets and out of it. */
    @Test
    void cellsMoveWithTheWindow() {
        explore(getClass(), Model.class, scenario(
                List.of(op("acquire", 0), op("succeed", 0), op("acquire", 0), op("fail", 0)),
                List.of(List.of(op("acquire", 1), op("succeed", 1), op("acquire", 1), op("fail", 1)),
                        List.of(op("advance"), op("metrics"))),
                List.of(op("acquire", 0), op("fail", 0), op("metrics"))));
    }
}
