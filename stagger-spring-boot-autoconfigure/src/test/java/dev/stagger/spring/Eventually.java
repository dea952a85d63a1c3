package dev.stagger.spring;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;

/** Waiting, in the tests, for what other threads do: a condition polled every millisecond, 10 s at most. */
final class Eventually {
    private Eventually() {
    }

    static void awaitTrue(BooleanSupplier condition) {
        long giveUp = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > giveUp) {
                throw new AssertionError("condition not met within 10 s");
            }
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1));
        }
    }
}
