package dev.stagger.jobs.internal;

import dev.stagger.Backoff;
import dev.stagger.RandomSource;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.BiConsumer;

/**
 * The pool's run state as its threads see it, and how they pause after a database failure:
 * exponential backoff from 100 ms to 5 s with full jitter (the core {@link Backoff}), cut short
 * when the pool stops.
 */
public final class PoolSignals {
    private static final Backoff RECONNECT = Backoff.exponential(Duration.ofMillis(100))
            .maxDelay(Duration.ofSeconds(5)).jitter(dev.stagger.Jitter.full());

    private final CountDownLatch stopClaiming = new CountDownLatch(1);
    private final CountDownLatch stopAll = new CountDownLatch(1);
    private final RandomSource random;
    private final BiConsumer<Exception, Duration> onFailure;

    public PoolSignals(RandomSource random, BiConsumer<Exception, Duration> onFailure) {
        this.random = random;
        this.onFailure = onFailure;
    }

    public boolean claiming() {
        return stopClaiming.getCount() > 0;
    }

    public boolean alive() {
        return stopAll.getCount() > 0;
    }

    public void stopClaiming() {
        stopClaiming.countDown();
    }

    public void stopAll() {
        stopClaiming.countDown();
        stopAll.countDown();
    }

    /** Waits {@code d}, or until the pool stops. */
    public void pauseFor(Duration d) {
        try {
            stopAll.await(d.toNanos(), TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Waits the backoff for the {@code failures}-th consecutive failure, or until the pool stops. */
    public void pauseAfterFailure(Exception error, int failures) {
        long nanos = RECONNECT.start(random).nextDelayNanos(Math.min(failures, 30));
        onFailure.accept(error, Duration.ofNanos(nanos));
        try {
            stopAll.await(nanos, TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
