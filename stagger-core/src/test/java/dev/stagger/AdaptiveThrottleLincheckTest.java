package dev.stagger;

import dev.stagger.testing.VirtualClock;
import java.time.Duration;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.StressOptions;
import org.junit.jupiter.api.Test;

/**
 * Lincheck: an {@link AdaptiveThrottle} with a one-bucket window of 1 s, counting requests and
 * accepts while the clock moves on, checked against {@link Model}. With one bucket each count is
 * one word, so requests, accepts and the window's roll are linearizable; a request made on a clock
 * reading from before a roll is dropped, as if it had been counted just before the roll.
 *
 * <p>The draw is fixed at 0.999, above any probability a scenario of this size reaches, so every
 * request is admitted: the refusal decision reads the two counts one after the other, which is
 * deliberately not an atomic snapshot (see the class comment), and is tested sequentially in
 * {@link AdaptiveThrottleTest}.
 */
public class AdaptiveThrottleLincheckTest {
    private static final Duration STEP = Duration.ofSeconds(1);

    private final VirtualClock clock = new VirtualClock();
    private final AdaptiveThrottle throttle = AdaptiveThrottle.builder("lincheck").window(STEP).buckets(1)
            .random(RandomSource.sequence(0.999)).clock(clock).build();

    @Operation
    public boolean tryAcquire() {
        return throttle.tryAcquire();
    }

    @Operation
    public void onAccepted() {
        throttle.onAccepted();
    }

    @Operation
    public long requests() {
        return throttle.requests();
    }

    @Operation
    public long accepts() {
        return throttle.accepts();
    }

    /** Never run by two threads at once (see RetryBudgetLincheckTest). */
    @Operation(nonParallelGroup = "clock")
    public void advance() {
        clock.advance(STEP);
    }

    /** The documented behaviour with one bucket: counts since the last roll. */
    public static final class Model {
        private long requests;
        private long accepts;

        public boolean tryAcquire() {
            requests++;
            return true;
        }

        public void onAccepted() {
            accepts++;
        }

        public long requests() {
            return requests;
        }

        public long accepts() {
            return accepts;
        }

        public void advance() {
            requests = 0;
            accepts = 0;
        }
    }

    @Test
    void modelChecking() {
        BreakerHarness.modelChecker().iterations(BreakerHarness.ITERATIONS)
                .invocationsPerIteration(BreakerHarness.MODEL_CHECKING_INVOCATIONS)
                .threads(2).actorsPerThread(3).actorsBefore(2).actorsAfter(2)
                .sequentialSpecification(Model.class).check(getClass());
    }

    @Test
    void stress() {
        new StressOptions().iterations(BreakerHarness.ITERATIONS).invocationsPerIteration(BreakerHarness.STRESS_INVOCATIONS)
                .threads(3).actorsPerThread(3).actorsBefore(2).actorsAfter(2)
                .sequentialSpecification(Model.class).check(getClass());
    }
}
