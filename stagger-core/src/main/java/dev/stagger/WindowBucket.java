package dev.stagger;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.atomic.LongAdder;
import org.jspecify.annotations.Nullable;

/**
 * One bucket of a {@link CircuitBreaker}'s sliding window: its own counts live in {@code word}
 * (laid out by {@link BreakerWord}); what came before is fixed.
 *
 * <p>Under contention, successes that no reading of the window could make trip are counted in
 * {@code cells} instead of the word: one counter per stripe, each on its own cache line, chosen
 * by thread. A reading that needs the bucket's calls exactly (a decision close to the threshold,
 * the window moving on, {@code metrics()}) first freezes every cell for good and publishes the
 * total in {@code frozenCalls}; a success that finds its cell frozen counts through the word.
 * Readers read {@code frozenCalls} and {@code cells} before the word: a frozen total read before
 * the word holds every success the cells will ever hold, and cells still null after the word was
 * read mean no success counted in cells before that reading.
 */
final class WindowBucket {
    // ---- the cells: STRIPES counters, CELL_PAD longs apart, a guard line each side ----
    /** A power of two, four or more per processor (so that threads by id rarely share one), at most 64. */
    private static final int STRIPES = Math.min(64,
            Integer.highestOneBit(Math.max(1, Runtime.getRuntime().availableProcessors()) * 8 - 1));
    private static final int CELL_PAD = 16;
    private static final long FROZEN_CELL = Long.MIN_VALUE;
    /** The cells of a bucket frozen before any were needed. */
    static final long[] NO_CELLS = new long[0];

    private static final VarHandle WORD;
    private static final VarHandle CELLS;
    private static final VarHandle CELL = MethodHandles.arrayElementVarHandle(long[].class);

    static {
        try {
            MethodHandles.Lookup l = MethodHandles.lookup();
            WORD = l.findVarHandle(WindowBucket.class, "word", long.class);
            CELLS = l.findVarHandle(WindowBucket.class, "cells", long[].class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    final long epoch;
    /** The last clock reading of the period {@code epoch}. */
    final long lastNano;
    /** Position in the phase's sequence of buckets. */
    final long seq;
    /** Calls and failures of the sealed buckets inside the window ending at this epoch. */
    final long baseCalls;
    final long baseFailures;
    /** Calls and failures of earlier (full) buckets of this same epoch. */
    final long sameEpochCalls;
    final long sameEpochFailures;
    /** Read directly, changed only through {@link #casWord}. */
    volatile long word;
    final LongAdder slow = new LongAdder();
    /** Successes counted beside the word (null until two threads contend on it); see the class. */
    volatile long @Nullable [] cells;
    /** The cells' total once they are frozen; -1 before. */
    volatile long frozenCalls = -1;

    WindowBucket(long epoch, long lastNano, long seq, long baseCalls, long baseFailures, long sameEpochCalls,
                 long sameEpochFailures, long word) {
        this.epoch = epoch;
        this.lastNano = lastNano;
        this.seq = seq;
        this.baseCalls = baseCalls;
        this.baseFailures = baseFailures;
        this.sameEpochCalls = sameEpochCalls;
        this.sameEpochFailures = sameEpochFailures;
        this.word = word;
    }

    boolean casWord(long expected, long next) {
        return WORD.compareAndSet(this, expected, next);
    }

    /** Adds one success to the calling thread's cell; false when the cells are frozen. */
    static boolean addToCell(long[] cells) {
        if (cells == NO_CELLS) {
            return false;
        }
        int stripe = (int) Thread.currentThread().getId();
        for (int tries = 0; ; tries++) {
            int i = CELL_PAD * (1 + ((stripe + tries) & (STRIPES - 1)));
            long v = (long) CELL.getVolatile(cells, i);
            if (v < 0) {
                return false;
            }
            if (CELL.compareAndSet(cells, i, v, v + 1)) {
                return true;
            }
        }
    }

    /** The successes the cells hold now (a lower bound of what they will hold). */
    static long cellSum(long[] cells) {
        long sum = 0;
        for (int i = CELL_PAD; i < cells.length - CELL_PAD; i += CELL_PAD) {
            sum += (long) CELL.getVolatile(cells, i) & ~FROZEN_CELL;
        }
        return sum;
    }

    /** Starts counting successes in cells, unless another thread did or the cells are frozen. */
    void addCells() {
        CELLS.compareAndSet(this, null, new long[CELL_PAD * (STRIPES + 2)]);
    }

    /** Freezes the cells for good (idempotent; any thread may do it) and returns their total. */
    long freeze() {
        long total = frozenCalls;
        if (total >= 0) {
            return total;
        }
        long[] cs = cells;
        while (cs == null) {
            if (CELLS.compareAndSet(this, null, NO_CELLS)) {
                cs = NO_CELLS;
            } else {
                cs = cells;
            }
        }
        total = 0;
        for (int i = CELL_PAD; i < cs.length - CELL_PAD; i += CELL_PAD) {
            long v;
            do {
                v = (long) CELL.getVolatile(cs, i);
            } while (v >= 0 && !CELL.compareAndSet(cs, i, v, v | FROZEN_CELL));
            total += v & ~FROZEN_CELL;
        }
        frozenCalls = total;
        return total;
    }
}
