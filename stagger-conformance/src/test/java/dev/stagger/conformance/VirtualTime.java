package dev.stagger.conformance;

import dev.stagger.testing.VirtualClock;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/** Drives an async call on a virtual clock: HTTP happens in real time, waits in virtual time. */
public final class VirtualTime {
    private VirtualTime() {
    }

    /**
     * Runs due waits as they are scheduled until {@code future} completes (10 s real-time guard),
     * and returns its value or throws its failure's cause.
     */
    public static <T> T drive(VirtualClock clock, CompletableFuture<T> future) throws Exception {
        long giveUp = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!future.isDone()) {
            if (clock.pendingTasks() > 0) {
                clock.runUntilIdle();
            } else if (System.nanoTime() > giveUp) {
                throw new AssertionError("async call did not finish: " + future);
            } else {
                LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1));
            }
        }
        try {
            return future.get();
        } catch (ExecutionException e) {
            throw e.getCause() instanceof Exception cause ? cause : e;
        }
    }
}
