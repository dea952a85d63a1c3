package dev.stagger.conformance;

import dev.stagger.testing.VirtualClock;
import dev.stagger.testsupport.Await;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;

/** Drives an async call on a virtual clock: HTTP happens in real time, waits in virtual time. */
public final class VirtualTime {
    private VirtualTime() {
    }

    /**
     * Runs due waits as they are scheduled until {@code future} completes ({@link Await#LIMIT} real-time guard),
     * and returns its value or throws its failure's cause.
     */
    public static <T> T drive(VirtualClock clock, CompletableFuture<T> future) throws Exception {
        Await.runUntilDone(future, () -> clock.pendingTasks() > 0, clock::runUntilIdle);
        try {
            return future.get();
        } catch (ExecutionException e) {
            throw e.getCause() instanceof Exception cause ? cause : e;
        }
    }
}
