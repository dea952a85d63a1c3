package dev.stagger;

/**
 * The bit layout of the two 64-bit words a {@link CircuitBreaker} decides on, each changed only by
 * compare-and-set, so that one reading of a word is one consistent view of what it counts.
 *
 * <p>A closed phase's bucket word ({@link WindowBucket}):
 * {@code [SEALED][TRIPPED][RESET][consecutive 13][failures 24][calls 24]}: the bucket's own calls
 * and failures, the failures in a row, and the flags that stop it taking outcomes (sealed: full,
 * its period over, tripped or reset). A bucket holds up to 2<sup>24</sup>-1 calls; the consecutive
 * count saturates at {@link #MAX_CONSECUTIVE}.
 *
 * <p>A half-open phase's word: {@code [SEALED][TRIPPED][RESET][CLOSING][successes 28][permits left 32]}.
 */
final class BreakerWord {
    static final int COUNT_BITS = 24;
    static final long COUNT_MASK = (1L << COUNT_BITS) - 1;
    static final int FAILURES_SHIFT = COUNT_BITS;
    static final int CONSECUTIVE_SHIFT = 2 * COUNT_BITS;
    static final long CONSECUTIVE_MASK = (1L << 13) - 1;
    static final int MAX_CONSECUTIVE = (int) CONSECUTIVE_MASK;
    static final long SEALED = 1L << 63;
    static final long TRIPPED = 1L << 62;
    static final long RESET = 1L << 61;
    /** Half-open only: every probe succeeded. */
    static final long CLOSING = 1L << 60;
    static final int SUCCESSES_SHIFT = 32;
    static final long PERMITS_MASK = 0xFFFF_FFFFL;
    static final int MAX_HALF_OPEN_PERMITS = (1 << 28) - 1;

    private BreakerWord() {
    }

    /** The calls a bucket word counts. */
    static long calls(long w) {
        return w & COUNT_MASK;
    }

    /** The failures a bucket word counts. */
    static long failures(long w) {
        return (w >>> FAILURES_SHIFT) & COUNT_MASK;
    }

    /** The failures in a row a bucket word counts. */
    static int consecutive(long w) {
        return (int) ((w >>> CONSECUTIVE_SHIFT) & CONSECUTIVE_MASK);
    }
}
