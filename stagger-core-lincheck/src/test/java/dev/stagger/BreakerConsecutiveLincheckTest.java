package dev.stagger;

import static dev.stagger.BreakerHarness.op;
import static dev.stagger.BreakerHarness.scenario;

import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Lincheck: a breaker that opens on the first failure, with one half-open probe, checked against
 * {@link BreakerModel} — permits, outcomes, releases, reads, forced opens, resets and clock moves in any interleaving.
 */
public class BreakerConsecutiveLincheckTest extends BreakerHarness {
    static final BreakerModel.Config CONFIG = new BreakerModel.Config(1, 0, 0, Duration.ofSeconds(30), 10,
            Duration.ofSeconds(10), 1, Duration.ofSeconds(10), null, 1);

    public BreakerConsecutiveLincheckTest() {
        super(CONFIG);
    }

    /** The specification for this configuration. */
    public static final class Model extends BreakerModel {
        public Model() {
            super(CONFIG);
        }
    }

    /**
     * A permit taken while closed and released once the breaker is half-open must not return to
     * the half-open period: that period would admit a probe it never issued.
     */
    @Test
    void aPermitReturnsOnlyToThePeriodThatIssuedIt() {
        explore(getClass(), Model.class, scenario(List.of(),
                List.of(List.of(op("acquire", 0), op("release", 0)),
                        List.of(op("acquire", 1), op("fail", 1), op("advance"), op("acquire", 1))),
                List.of(op("acquire", 2))));
    }

    /**
     * A failure racing the success that closes a half-open breaker is counted in the closed state
     * that follows: with one failure to open, the breaker ends OPEN whichever comes first.
     */
    @Test
    void aFailureRacingTheClosingSuccessIsNotLost() {
        explore(getClass(), Model.class, scenario(
                List.of(op("acquire", 2), op("acquire", 0), op("fail", 0), op("advance"), op("acquire", 1)),
                List.of(List.of(op("succeed", 1)), List.of(op("fail", 2))),
                List.of(op("state"))));
    }

    /**
     * An open breaker reports HALF_OPEN once its period is over, judged on a clock reading taken
     * while that open phase is still current: a reset and a clock move in between must not make
     * it report HALF_OPEN, a state the breaker never had at any one moment.
     */
    @Test
    void anOpenStateIsJudgedOnOneReading() {
        explore(getClass(), Model.class, scenario(
                List.of(op("acquire", 0), op("fail", 0)),
                List.of(List.of(op("reset"), op("advance")), List.of(op("state"), op("metrics"))),
                List.of()));
    }

    /**
     * Forcing a breaker open while a probe's success is closing it, and while a failure trips it:
     * whatever the order, the breaker ends OPEN and stays so past its open period.
     */
    @Test
    void aForcedOpenWinsOverAClosingProbeAndATrip() {
        explore(getClass(), Model.class, scenario(
                List.of(op("acquire", 0), op("fail", 0), op("advance"), op("acquire", 1), op("acquire", 2)),
                List.of(List.of(op("succeed", 1), op("acquire", 0), op("fail", 0)), List.of(op("forceOpen"), op("state"))),
                List.of(op("advance"), op("advance"), op("advance"), op("advance"), op("state"))));
    }

    /**
     * A trip takes effect, and its open period starts, at a clock reading made once the trip is
     * visible: a thread that saw the breaker CLOSED after the clock moved puts the trip after that
     * move, so the breaker must stay OPEN for a whole period from there, not report HALF_OPEN at
     * once because the deciding thread read the clock before the move.
     */
    @Test
    void aTripTakesEffectAtAClockReadingMadeOnceItIsVisible() {
        explore(getClass(), Model.class, scenario(List.of(),
                List.of(List.of(op("acquire", 1), op("fail", 1)), List.of(op("advance"), op("state"))),
                List.of(op("state"))));
    }

    /** The same for a probe's failure re-opening a half-open breaker: no probe admitted early. */
    @Test
    void aReopeningTakesEffectAtAClockReadingMadeOnceItIsVisible() {
        explore(getClass(), Model.class, scenario(
                List.of(op("acquire", 0), op("fail", 0), op("advance"), op("acquire", 1)),
                List.of(List.of(op("fail", 1)), List.of(op("advance"), op("acquire", 2))),
                List.of(op("acquire", 0))));
    }
}
