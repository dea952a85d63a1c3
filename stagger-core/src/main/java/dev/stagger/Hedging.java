package dev.stagger;

import java.util.concurrent.atomic.AtomicLong;

/**
 * A {@link Retry}'s hedging at run time: its {@link HedgePolicy} and the recent latencies a
 * percentile delay reads. Shared by the copies a {@code with...} method makes on the same clock.
 * Thread-safe and lock-free.
 */
final class Hedging {
    /** Latencies recorded between two readings of the percentile. */
    private static final int REFRESH_EVERY = 32;

    final HedgePolicy policy;
    private final LatencyHistogram latencies;
    /** The percentile delay last read, or -1 while warming up. */
    private volatile long cachedNanos = -1;
    private final AtomicLong untilRefresh = new AtomicLong();

    Hedging(HedgePolicy policy, Clock clock) {
        this.policy = policy;
        this.latencies = policy.percentile().isPresent() ? new LatencyHistogram(clock, policy.windowNanos()) : null;
    }

    /** The wait before the next hedge of a call starting now. */
    long delayNanos() {
        if (latencies == null) {
            return policy.delayNanos();
        }
        long cached = cachedNanos;
        return cached < 0 ? policy.delayNanos() : cached;
    }

    /**
     * An attempt took {@code nanos}: an accepted one, or a loser cancelled after that long (its true
     * latency is at least that; counting it keeps the slow tail in the histogram, which the winners
     * alone would hide). Every {@value #REFRESH_EVERY} latencies, one caller re-reads the percentile.
     */
    void observed(long nanos) {
        LatencyHistogram h = latencies;
        if (h == null) {
            return;
        }
        h.record(nanos);
        if (cachedNanos >= 0 && untilRefresh.decrementAndGet() > 0) { // while warming up, every latency may end it
            return;
        }
        untilRefresh.set(REFRESH_EVERY);
        refresh();
    }

    /** Reads the percentile now (the fixed delay until the warm-up is over), never below the floor. */
    void refresh() {
        LatencyHistogram h = latencies;
        if (h == null) {
            return;
        }
        if (h.count() < policy.warmup()) {
            cachedNanos = -1;
            return;
        }
        long p = h.percentile(policy.percentile().getAsDouble());
        cachedNanos = p < 0 ? -1 : Math.max(policy.floorNanos(), p);
    }

    LatencyHistogram latencies() {
        return latencies;
    }
}
