package dev.stagger;

import java.util.concurrent.atomic.AtomicLongArray;

/**
 * Over the last second or so, how many first attempts a hedged retry saw end or outlive their
 * hedge delay, and how many of them outlived it: the signal by which {@link Hedging} tells a tail
 * (a few slow attempts, which hedges help) from an overload (every attempt slow, which hedges
 * make worse). Thread-safe and lock-free; a record is a read of the coarse clock and one
 * compare-and-set, nothing allocated.
 *
 * <p>Two half-windows of {@value #HALF_WINDOW_NANOS} ns, each one word: the half-window's index
 * (16 bits), the attempts that outlived the delay and the attempts seen (24 bits each, saturating).
 * A record into a word still holding an older half-window starts it afresh; a reading sums the
 * current and the previous half-window, so it covers between one half and the whole window.
 */
final class SlowShare {
    /** Each half of the window: the share reflects the last 0.5 to 1 s. */
    static final long HALF_WINDOW_NANOS = 500_000_000L;
    /** First attempts the window must hold before a share is trusted: a few slow calls on a quiet service are a tail. */
    static final int MIN_SAMPLES = 20;
    /** Standard deviations above the allowed share a count must be before it is believed. */
    static final int MARGIN = 2;

    private static final int COUNT_BITS = 24;
    private static final long COUNT_MASK = (1L << COUNT_BITS) - 1;
    private static final int SLOW_SHIFT = COUNT_BITS;
    private static final int TAG_SHIFT = 2 * COUNT_BITS;
    private static final long TAG_MASK = 0xFFFF;

    private final Clock clock;
    private final AtomicLongArray halves = new AtomicLongArray(2);

    SlowShare(Clock clock) {
        this.clock = clock;
        long epoch = epoch();
        for (int i = 0; i < 2; i++) {
            halves.set(i, ((epoch - 2) & TAG_MASK) << TAG_SHIFT); // empty, and older than the window
        }
    }

    /** A first attempt answered before its delay. */
    void answeredInTime() {
        add(false);
    }

    /** A first attempt outlived its delay (the delay fired while it ran). */
    void outlivedDelay() {
        add(true);
    }

    /**
     * Whether more than {@code maxShare} of the first attempts in the window outlived their delay,
     * by more than chance: by over {@value #MARGIN} standard deviations of that share's count
     * ({@code sqrt(n m (1 - m))}), so a genuine tail drawn at random seldom trips it (at p95, 5 %
     * expected and 10 % allowed, 5 of 20 slow attempts or 8 of 40 are needed: under 0.3 % likely),
     * while an overload, where most attempts are slow, trips it at once. Read only once the window
     * holds {@value #MIN_SAMPLES} first attempts.
     */
    boolean above(double maxShare) {
        long epoch = epoch();
        long seen = 0;
        long slow = 0;
        for (int i = 0; i < 2; i++) {
            long w = halves.get(i);
            long age = (epoch - (w >>> TAG_SHIFT)) & TAG_MASK;
            if (age <= 1) {
                seen += w & COUNT_MASK;
                slow += (w >>> SLOW_SHIFT) & COUNT_MASK;
            }
        }
        return seen >= MIN_SAMPLES && slow > maxShare * seen + MARGIN * Math.sqrt(seen * maxShare * (1 - maxShare));
    }

    private void add(boolean slow) {
        long epoch = epoch();
        int i = (int) (epoch & 1);
        long tag = epoch & TAG_MASK;
        while (true) {
            long w = halves.get(i);
            long ahead = ((w >>> TAG_SHIFT) - tag) & TAG_MASK;
            if (ahead != 0 && ahead < TAG_MASK / 2) {
                return; // this reading of the clock is older than the half-window the word holds: dropped
            }
            long seen;
            long slowCount;
            if (ahead == 0) {
                seen = w & COUNT_MASK;
                slowCount = (w >>> SLOW_SHIFT) & COUNT_MASK;
            } else {
                seen = 0; // an older half-window: this record starts the current one
                slowCount = 0;
            }
            if (seen == COUNT_MASK) {
                return; // saturated: the share is read from far fewer than this
            }
            long next = tag << TAG_SHIFT | (slowCount + (slow ? 1 : 0)) << SLOW_SHIFT | (seen + 1);
            if (halves.compareAndSet(i, w, next)) {
                return;
            }
        }
    }

    private long epoch() {
        return Math.floorDiv(clock.coarseNanoTime(), HALF_WINDOW_NANOS);
    }
}
