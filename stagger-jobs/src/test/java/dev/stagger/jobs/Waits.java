package dev.stagger.jobs;

import java.time.Duration;
import java.util.concurrent.Callable;

/** Polls a condition for tests that wait on real worker threads or processes. */
final class Waits {
    private Waits() {
    }

    static void until(String what, Duration timeout, Callable<Boolean> condition) throws Exception {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!condition.call()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("timed out after " + timeout + " waiting for " + what);
            }
            Thread.sleep(50);
        }
    }
}
