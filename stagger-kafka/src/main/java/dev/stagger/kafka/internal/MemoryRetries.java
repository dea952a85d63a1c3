package dev.stagger.kafka.internal;

import java.time.Duration;

/**
 * Which retries of a consumer wait in its memory instead of a delay topic: those whose wait is at
 * most {@link #upToMillis}, at most {@code max} at once over all of the consumer's partitions; past
 * either, a retry goes through its delay topic as any other. A retry kept here holds its
 * partition's committed offset below its record until it settles ({@link Lane}). Thread-safe.
 */
public final class MemoryRetries {
    /** The longest wait kept in memory. */
    final long upToMillis;
    private final Places kept;

    /**
     * @param upTo the longest wait kept in memory
     * @param max retries kept at once, over all partitions
     */
    public MemoryRetries(Duration upTo, int max) {
        if (upTo.isNegative() || upTo.isZero()) {
            throw new IllegalArgumentException("upTo must be positive, got " + upTo);
        }
        if (max < 1) {
            throw new IllegalArgumentException("max must be at least 1, got " + max);
        }
        this.upToMillis = upTo.toMillis();
        this.kept = new Places(max);
    }

    /** Takes a place for a retry waiting {@code waitMillis}; false when that is too long or every place is taken. */
    boolean take(long waitMillis) {
        return waitMillis <= upToMillis && kept.take();
    }

    /** {@code n} retries left memory (handled again, or sent to their delay topic). */
    void giveBack(int n) {
        kept.giveBack(n);
    }

    /** Retries waiting in memory now. */
    public int kept() {
        return kept.taken();
    }
}
