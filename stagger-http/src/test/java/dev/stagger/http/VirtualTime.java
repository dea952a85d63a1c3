package dev.stagger.http;

import dev.stagger.testing.VirtualClock;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/** Drives an async call on a virtual clock: HTTP happens in real time, waits in virtual time. */
final class VirtualTime {
    private VirtualTime() {
    }

    /** Runs due waits as they are scheduled until {@code future} completes (10 s real-time guard). */
    static <T> T drive(VirtualClock clock, CompletableFuture<T> future) throws Exception {
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
        return future.get();
    }

    /** Waits (in real time, at most 10 s) until the clock holds a scheduled wait. */
    static void awaitScheduledWait(VirtualClock clock) {
        long giveUp = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (clock.pendingTasks() == 0) {
            if (System.nanoTime() > giveUp) {
                throw new AssertionError("no wait was scheduled");
            }
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1));
        }
    }
}
