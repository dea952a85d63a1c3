package dev.stagger.shedding.support;

import java.util.function.BooleanSupplier;

/** Waits for a condition another thread will make true; fails after 10 s (a hang, not a timing check). */
public final class Await {
    private Await() {
    }

    public static void until(String what, BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + 10_000_000_000L;
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("still waiting for: " + what);
            }
            Thread.sleep(2);
        }
    }
}
