package dev.stagger.shedding.internal;

import java.util.concurrent.atomic.AtomicLong;

/**
 * Counts events over a trailing window, as a sliding estimate over two fixed buckets of the
 * window's length: {@code previous * (1 - elapsed / window) + current}, the way rate limiters
 * commonly approximate a sliding window. Lock-free. Approximate by design: an event that races
 * with a bucket change may land in either bucket, and the estimate assumes the previous bucket's
 * events were evenly spread.
 */
public final class WindowCounter {
    private final long windowNanos;
    private final AtomicLong bucketStart;
    private final AtomicLong current = new AtomicLong();
    private volatile long previous;

    public WindowCounter(long windowNanos, long nowNanos) {
        if (windowNanos <= 0) {
            throw new IllegalArgumentException("windowNanos must be positive, got " + windowNanos);
        }
        this.windowNanos = windowNanos;
        this.bucketStart = new AtomicLong(nowNanos);
    }

    /** Counts one event at {@code nowNanos}. */
    public void increment(long nowNanos) {
        roll(nowNanos);
        current.incrementAndGet();
    }

    /** Events in the window ending at {@code nowNanos}. */
    public double count(long nowNanos) {
        roll(nowNanos);
        double elapsed = Math.min(1.0, Math.max(0.0, (nowNanos - bucketStart.get()) / (double) windowNanos));
        return previous * (1.0 - elapsed) + current.get();
    }

    private void roll(long nowNanos) {
        long start = bucketStart.get();
        long elapsed = nowNanos - start;
        if (elapsed < windowNanos) {
            return;
        }
        long buckets = elapsed / windowNanos;
        if (bucketStart.compareAndSet(start, start + buckets * windowNanos)) {
            long ended = current.getAndSet(0);
            previous = buckets == 1 ? ended : 0; // two or more windows passed: the last bucket is empty
        }
    }
}
