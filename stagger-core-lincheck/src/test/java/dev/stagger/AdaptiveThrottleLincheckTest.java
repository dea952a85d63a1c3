package dev.stagger;

import dev.stagger.testing.VirtualClock;
import java.time.Duration;
import org.jetbrains.lincheck.datastructures.Operation;
import org.junit.jupiter.api.Test;

/**
 * Lincheck: an {@link AdaptiveThrottle} with a one-bucket window of 1 s (K = 1, every draw 0.3),
 * refusing, counting outcomes and rolling its window in any interleaving, checked against
 * {@link Model}: within one bucket the throttle promises linearizability, refusals included. An
 * outcome recorded on a clock reading from before a roll is dropped, as if counted just before it.
 */
public class AdaptiveThrottleLincheckTest {
    private static final Duration STEP = Duration.ofSeconds(1);

    private final VirtualClock clock = new VirtualClock();
    private final AdaptiveThrottle throttle = AdaptiveThrottle.builder("lincheck").window(STEP).buckets(1).k(1)
            .random(RandomSource.sequence(0.3)).clock(clock).build();

    @Operation
    public boolean tryAcquire() {
        return throttle.tryAcquire();
    }

    @Operation
    public void onAccepted() {
        throttle.onAccepted();
    }

    @Operation
    public void onRejected() {
        throttle.onRejected();
    }

    @Operation
    public double rejectionProbability() {
        return throttle.rejectionProbability();
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
            if (requests == 0 || rejectionProbability() <= 0.3) {
                return true;
            }
            requests++;
            return false;
        }

        public void onAccepted() {
            requests++;
            accepts++;
        }

        public void onRejected() {
            requests++;
        }

        public double rejectionProbability() {
            double excess = requests - accepts;
            return excess <= 0 ? 0 : excess / (requests + 1);
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
        BreakerHarness.modelCheck(getClass(), Model.class, 2);
    }

    @Test
    void stress() {
        BreakerHarness.stressCheck(getClass(), Model.class, 2);
    }
}
