package dev.stagger.kafka.internal;

/**
 * The key-order mode's bounds, shared by the work topic's lanes of one consumer: while a key has
 * a record in retry, its later records are held back, at most {@code maxPerKey} of one key and
 * {@code maxTotal} in all. A record past either bound is not held: its partition stops at it (and
 * is paused once {@code maxPending} records wait behind it) until a held key is released.
 * Thread-safe.
 */
public final class KeyOrder {
    final int maxPerKey;
    final int maxTotal;
    private final Places held;

    /**
     * @param maxPerKey records of one key held at most
     * @param maxTotal records held at most, all keys and partitions of the consumer together
     */
    public KeyOrder(int maxPerKey, int maxTotal) {
        this.maxPerKey = maxPerKey;
        this.maxTotal = maxTotal;
        this.held = new Places(maxTotal);
    }

    /** Takes a place for one more held record; false when all {@code maxTotal} are taken. */
    boolean take() {
        return held.take();
    }

    /** Gives back {@code n} places. */
    void giveBack(int n) {
        held.giveBack(n);
    }

    /** Records held now, over all the consumer's partitions. */
    public int held() {
        return held.taken();
    }
}
