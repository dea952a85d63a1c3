package dev.stagger.shedding.support;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/** Holds handler threads until the test opens it (or 30 s pass, so a failed test cannot hang). */
public final class Gate {
    private final CountDownLatch open = new CountDownLatch(1);

    /** Waits until the gate opens; keeps the interrupt status if interrupted. */
    public void pass() {
        try {
            open.await(30, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    public void open() {
        open.countDown();
    }
}
