package dev.stagger;

import dev.stagger.testing.VirtualClock;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.jetbrains.kotlinx.lincheck.Actor;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Validate;
import org.junit.jupiter.api.Test;

/**
 * Lincheck: a {@link RetryBudget} (one token, ratio 0.5, a floor of 1 retry per second) with
 * deposits, retries and 500 ms clock moves in any interleaving, checked against {@link Model},
 * and after every run against the bound its Javadoc states.
 */
public class RetryBudgetLincheckTest {
    private static final Duration STEP = Duration.ofMillis(500);
    private static final double FLOOR = 1;

    private final VirtualClock clock = new VirtualClock();
    private final RetryBudget budget = RetryBudget.builder("lincheck").maxTokens(1).ratio(0.5)
            .minRetriesPerSecond(FLOOR).clock(clock).build();
    private final AtomicInteger successes = new AtomicInteger();
    private final AtomicInteger granted = new AtomicInteger();

    @Operation
    public void onSuccess() {
        budget.onSuccess();
        successes.incrementAndGet();
    }

    @Operation
    public boolean tryAcquireRetry() {
        boolean ok = budget.tryAcquireRetry();
        if (ok) {
            granted.incrementAndGet();
        }
        return ok;
    }

    /**
     * Moves the clock. Never run by two threads at once: {@link VirtualClock#advance} computes its
     * target from the time it was called at, so two concurrent moves of one step add up to one step.
     */
    @Operation(nonParallelGroup = "clock")
    public void advance() {
        clock.advance(STEP);
    }

    /** Over the whole run: retries ≤ maxTokens + ratio × successes + ceil(r) + r × seconds. */
    @Validate
    public void retriesStayWithinTheStatedBound() {
        double seconds = clock.now().toNanos() / 1e9;
        double bound = 1 + 0.5 * successes.get() + Math.ceil(FLOOR) + FLOOR * seconds;
        if (granted.get() > bound) {
            throw new IllegalStateException(granted.get() + " retries granted, bound " + bound);
        }
    }

    /** The documented behaviour, sequentially: tokens first, then the continuously refilled floor. */
    public static final class Model {
        private static final long INTERVAL = 1_000_000_000L; // 1 s / 1
        private static final long CAPACITY = INTERVAL; // ceil(1) retry
        private long now;
        private long tokensMilli = 1000;
        private long busyUntil;

        public void onSuccess() {
            tokensMilli = Math.min(1000, tokensMilli + 500);
        }

        public boolean tryAcquireRetry() {
            if (tokensMilli >= 1000) {
                tokensMilli -= 1000;
                return true;
            }
            long next = Math.max(busyUntil, now) + INTERVAL;
            if (next - now > CAPACITY) {
                return false;
            }
            busyUntil = next;
            return true;
        }

        public void advance() {
            now += STEP.toNanos();
        }

        public void retriesStayWithinTheStatedBound() {
        }
    }

    private static Actor op(String name) {
        return BreakerHarness.op(RetryBudgetLincheckTest.class, name);
    }

    /**
     * A retry decided on an out-of-date clock reading must not move the floor back: a floor kept
     * as a per-second counter was rewound by such a thread, which granted one retry too many and
     * handed the next caller a fresh allowance.
     */
    @Test
    void theFloorOnlyMovesForward() {
        BreakerHarness.explore(getClass(), Model.class, BreakerHarness.scenario(
                List.of(op("advance"), op("tryAcquireRetry"), op("tryAcquireRetry")),
                List.of(List.of(op("advance"), op("tryAcquireRetry")), List.of(op("tryAcquireRetry"))),
                List.of(op("tryAcquireRetry"))));
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
