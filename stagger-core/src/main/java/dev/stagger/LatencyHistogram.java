package dev.stagger;

import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * Recent latencies, for a hedge delay taken at a percentile of them. Lock-free and allocation-free
 * after construction: a record is a few arithmetic operations and an atomic increment.
 *
 * <p><b>Buckets.</b> Log-linear, as in HdrHistogram with three significant bits: values 0 to 7 ns
 * each have a bucket, and every power of two above is cut into 8 equal buckets, so a bucket's width
 * is at most 1/8 of its lower edge. A percentile is read as the upper edge of the bucket holding the
 * sample of that rank (nearest-rank), so it is never below the true sample and at most 12.5 % (plus
 * one nanosecond) above it. 488 buckets cover every non-negative {@code long}.
 *
 * <p><b>Recent.</b> Two half-windows of {@code window / 2} each, on the clock's coarse time: a
 * sample goes into the half-window of its time, and a percentile is read over the current and the
 * previous one, so it reflects between {@code window / 2} and {@code window} of history. The first
 * record of a new half-window clears the older one; records made by other threads during that
 * clear (once per half-window, a pass over 488 counters) are dropped rather than waited for, so no
 * thread ever waits on another. Otherwise no record is lost.
 */
final class LatencyHistogram {
    static final int SUB_BITS = 3;
    private static final int SUB = 1 << SUB_BITS;
    static final int BUCKETS = (63 - SUB_BITS + 1) * SUB;

    private final Clock clock;
    private final long halfWindowNanos;
    private final AtomicLongArray[] halves = {new AtomicLongArray(BUCKETS), new AtomicLongArray(BUCKETS)};
    private static final long UNUSED = -1;
    private static final long CLEARING = Long.MIN_VALUE;
    /** The half-window index each half holds; UNUSED when never used, CLEARING while being cleared. */
    private final AtomicLong[] stamps = {new AtomicLong(-1), new AtomicLong(-1)};
    private final AtomicLong[] counts = {new AtomicLong(), new AtomicLong()};

    LatencyHistogram(Clock clock, long windowNanos) {
        this.clock = clock;
        this.halfWindowNanos = Math.max(1, windowNanos / 2);
    }

    /** The bucket of a non-negative value. */
    static int bucket(long nanos) {
        if (nanos < SUB) {
            return (int) Math.max(0, nanos);
        }
        int exponent = 63 - Long.numberOfLeadingZeros(nanos);
        int sub = (int) (nanos >>> (exponent - SUB_BITS)) & (SUB - 1);
        return (exponent - SUB_BITS + 1) * SUB + sub;
    }

    /** The largest value in bucket {@code i}. */
    static long upperEdge(int i) {
        if (i < SUB) {
            return i;
        }
        int exponent = i / SUB + SUB_BITS - 1;
        long lower = (long) (SUB + i % SUB) << (exponent - SUB_BITS);
        return lower + (1L << (exponent - SUB_BITS)) - 1;
    }

    /** Records one latency; a negative one counts as zero. */
    void record(long nanos) {
        long epoch = clock.coarseNanoTime() / halfWindowNanos;
        int slot = (int) (epoch & 1);
        AtomicLong stamp = stamps[slot];
        long held = stamp.get();
        if (held != epoch) {
            if (held == CLEARING || held > epoch) {
                return; // being cleared for a new half-window, or this reading is older than the slot: dropped
            }
            if (held == UNUSED) {
                stamp.compareAndSet(UNUSED, epoch); // nothing to clear; whoever wins, the slot now holds epoch
            } else if (stamp.compareAndSet(held, CLEARING)) {
                clear(slot);
                stamp.set(epoch);
            } else if (stamp.get() != epoch) {
                return;
            }
        }
        halves[slot].incrementAndGet(bucket(nanos));
        counts[slot].incrementAndGet();
    }

    private void clear(int slot) {
        AtomicLongArray half = halves[slot];
        long removed = 0;
        for (int i = 0; i < BUCKETS; i++) {
            removed += half.getAndSet(i, 0);
        }
        counts[slot].addAndGet(-removed);
    }

    /** Whether slot {@code s} holds the current or the previous half-window. */
    private boolean live(int s, long epoch) {
        long held = stamps[s].get();
        return held == epoch || held == epoch - 1;
    }

    /** Samples in the window. */
    long count() {
        long epoch = clock.coarseNanoTime() / halfWindowNanos;
        long n = 0;
        for (int s = 0; s < 2; s++) {
            if (live(s, epoch)) {
                n += Math.max(0, counts[s].get());
            }
        }
        return n;
    }

    /**
     * The latency at {@code percentile} (above 0, at most 100) of the samples in the window, as the
     * upper edge of its bucket; -1 when the window is empty.
     */
    long percentile(double percentile) {
        long epoch = clock.coarseNanoTime() / halfWindowNanos;
        boolean a = live(0, epoch);
        boolean b = live(1, epoch);
        long total = 0;
        for (int i = 0; i < BUCKETS; i++) {
            total += (a ? halves[0].get(i) : 0) + (b ? halves[1].get(i) : 0);
        }
        if (total <= 0) {
            return -1;
        }
        long rank = Math.max(1, Math.min(total, (long) Math.ceil(percentile / 100.0 * total)));
        long seen = 0;
        for (int i = 0; i < BUCKETS; i++) {
            seen += (a ? halves[0].get(i) : 0) + (b ? halves[1].get(i) : 0);
            if (seen >= rank) {
                return upperEdge(i);
            }
        }
        return upperEdge(BUCKETS - 1); // counts moved while reading: the largest bucket bounds them all
    }
}
