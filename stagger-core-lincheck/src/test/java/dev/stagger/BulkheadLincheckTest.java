package dev.stagger;

import static dev.stagger.BreakerHarness.op;

import dev.stagger.testing.VirtualClock;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Param;
import org.jetbrains.lincheck.datastructures.ThreadIdGen;
import org.jetbrains.lincheck.datastructures.Validate;
import org.junit.jupiter.api.Test;

/**
 * Lincheck: a {@link Bulkhead} of two permits with a one-second wait, its permits taken at once or
 * queued for, given back, and its waits ended by the clock, in any interleaving. The sequential
 * specification is this class run on one thread; after every run the permits counted in flight are
 * exactly those callers hold, never above the limit, and the queue holds exactly the callers still
 * waiting, and nobody waits while a permit is free (no lost wake-up).
 */
@Param(name = "caller", gen = ThreadIdGen.class)
public class BulkheadLincheckTest {
    private static final int CALLERS = 8;
    private static final int LIMIT = 2;

    private final VirtualClock clock = new VirtualClock();
    private final Bulkhead bulkhead = Bulkhead.builder("lincheck").maxConcurrent(LIMIT).maxWait(Duration.ofSeconds(1))
            .clock(clock).build();
    @SuppressWarnings("unchecked")
    private final Deque<BulkheadPermits.Permit>[] held = (Deque<BulkheadPermits.Permit>[]) new Deque<?>[CALLERS];
    @SuppressWarnings("unchecked")
    private final List<CompletableFuture<BulkheadPermits.Permit>>[] queued =
            (List<CompletableFuture<BulkheadPermits.Permit>>[]) new List<?>[CALLERS];

    public BulkheadLincheckTest() {
        for (int i = 0; i < CALLERS; i++) {
            held[i] = new ArrayDeque<>();
            queued[i] = new ArrayList<>();
        }
    }

    @Operation
    public boolean tryAcquire(@Param(name = "caller") int caller) {
        BulkheadPermits.Permit p = bulkhead.permits.tryAcquire();
        if (p == null) {
            return false;
        }
        held[caller].push(p);
        return true;
    }

    /**
     * Asks with a wait: 0 granted (at once, or handed over before this looked), 1 queued. A future
     * already done without a permit is a queued wait that a concurrent {@link #advance} ended
     * between the queueing and this look (a wait is configured, so nothing is refused at once):
     * queued too, as in the sequential order where the advance comes after.
     */
    @Operation
    public int acquireWaiting(@Param(name = "caller") int caller) {
        CompletableFuture<BulkheadPermits.Permit> f = bulkhead.permits.acquireAsync();
        if (!f.isDone() || f.join() == null) {
            queued[caller].add(f);
            return 1;
        }
        held[caller].push(f.join());
        return 0;
    }

    /** Gives back one permit the caller holds (taken at once, or handed over while it waited). */
    @Operation
    public boolean release(@Param(name = "caller") int caller) {
        BulkheadPermits.Permit p = held[caller].poll();
        if (p == null) {
            for (CompletableFuture<BulkheadPermits.Permit> f : queued[caller]) {
                if (f.isDone() && f.join() != null) {
                    queued[caller].remove(f);
                    p = f.join();
                    break;
                }
            }
        }
        if (p == null) {
            return false;
        }
        bulkhead.permits.release(p, false);
        return true;
    }

    /** Ends every wait begun before (the wait is one second). Never run by two threads at once. */
    @Operation(nonParallelGroup = "clock")
    public void advance() {
        clock.advance(Duration.ofSeconds(1));
    }

    @Operation
    public int inFlight() {
        return bulkhead.inFlight();
    }

    @Validate
    public void permitsInFlightAreExactlyThoseHeld() {
        int holding = 0;
        int waiting = 0;
        for (int i = 0; i < CALLERS; i++) {
            holding += held[i].size();
            for (CompletableFuture<BulkheadPermits.Permit> f : queued[i]) {
                if (!f.isDone()) {
                    waiting++;
                } else if (f.join() != null) {
                    holding++;
                }
            }
        }
        if (bulkhead.inFlight() != holding || holding > LIMIT) {
            throw new IllegalStateException(bulkhead.inFlight() + " in flight, " + holding + " held");
        }
        if (bulkhead.waiting() != waiting) {
            throw new IllegalStateException(bulkhead.waiting() + " queued, " + waiting + " waiting");
        }
        if (waiting > 0 && holding < LIMIT) { // a lost wake-up: room free while a caller waits for it
            throw new IllegalStateException(waiting + " waiting with " + holding + " of " + LIMIT + " held");
        }
    }

    @Test
    void modelChecking() {
        BreakerHarness.modelCheck(getClass(), getClass(), 2); // the specification: this class run on one thread
    }

    /**
     * Both permits held, caller 2 queued; caller 0 gives one back while another reads the count in
     * flight and caller 3 asks without waiting. The permit goes straight to caller 2: the count
     * never reads 1, and caller 3 never takes the room ahead of the queue.
     */
    @Test
    void aPermitGivenBackWhileACallerWaitsIsNeverSeenFree() {
        Class<?> t = getClass();
        BreakerHarness.explore(t, t, BreakerHarness.scenario(
                List.of(op(t, "tryAcquire", 0), op(t, "tryAcquire", 1), op(t, "acquireWaiting", 2)),
                List.of(List.of(op(t, "release", 0)), List.of(op(t, "inFlight"), op(t, "tryAcquire", 3))),
                List.of(op(t, "inFlight"))));
    }

    /**
     * Both permits held; caller 0 gives one back while caller 3 asks with a wait and then reads the
     * count in flight. Whichever comes first, caller 3 ends up holding the permit (at once, or handed
     * over from the queue) and the count reads 2: a release that looked for waiters before caller 3
     * queued and freed the permit after never lets the count dip to 1 under a queued caller.
     */
    @Test
    void aCallerQueueingDuringAReleaseIsHandedThePermitOrFindsItFree() {
        Class<?> t = getClass();
        BreakerHarness.explore(t, t, BreakerHarness.scenario(
                List.of(op(t, "tryAcquire", 0), op(t, "tryAcquire", 1)),
                List.of(List.of(op(t, "release", 0)), List.of(op(t, "acquireWaiting", 3), op(t, "inFlight"))),
                List.of(op(t, "inFlight"))));
    }

    @Test
    void stress() {
        BreakerHarness.stressCheck(getClass(), getClass(), 2);
    }
}
