package dev.stagger.http;

import dev.stagger.testing.VirtualClock;
import dev.stagger.testsupport.Await;
import java.util.concurrent.CompletableFuture;

/** Drives an async call on a virtual clock: HTTP happens in real time, waits in virtual time. */
final class VirtualTime {
    private VirtualTime() {
    }

    /** Runs due waits as they are scheduled until {@code future} completes ({@link Await#LIMIT} real-time guard). */
    static <T> T drive(VirtualClock clock, CompletableFuture<T> future) throws Exception {
        Await.runUntilDone(future, () -> clock.pendingTasks() > 0, clock::runUntilIdle);
        return future.get();
    }

    /** Waits (in real time, at most {@link Await#LIMIT}) until the clock holds a scheduled wait. */
    static void awaitScheduledWait(VirtualClock clock) {
        Await.until("a scheduled wait", () -> clock.pendingTasks() > 0);
    }
}
