package dev.stagger.shedding.internal;

import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * Remembers recently seen keys in a fixed table of 64-bit hashes, one slot per hash (a
 * direct-mapped cache): bounded memory, lock-free, nothing allocated per key. Lossy on purpose: a
 * newer key landing in the same slot evicts an older one, so a key is remembered for roughly the
 * next {@code capacity} distinct keys, and an evicted key's repeat goes unrecognised. A false
 * "seen" needs two keys with the same 64-bit hash, which the per-instance random seed keeps from
 * being arranged.
 */
public final class RepeatedKeys {
    private final AtomicLongArray slots;
    private final int mask;
    private final long seed = ThreadLocalRandom.current().nextLong();

    /** @param capacity slots, rounded up to a power of two */
    public RepeatedKeys(int capacity) {
        int size = Integer.highestOneBit(Math.max(1, capacity - 1)) << 1;
        this.slots = new AtomicLongArray(size);
        this.mask = size - 1;
    }

    /** Records {@code key}; true when it was already remembered. */
    public boolean seenBefore(String key) {
        long hash = hash(key);
        return slots.getAndSet((int) (hash ^ (hash >>> 32)) & mask, hash) == hash;
    }

    private long hash(String key) {
        long h = seed ^ 0xcbf29ce484222325L;
        for (int i = 0; i < key.length(); i++) {
            h = (h ^ key.charAt(i)) * 0x100000001b3L;
        }
        h ^= h >>> 33;
        h *= 0xff51afd7ed558ccdL;
        h ^= h >>> 33;
        h *= 0xc4ceb9fe1a85ec53L;
        h ^= h >>> 33;
        return h == 0 ? 1 : h; // 0 marks an empty slot
    }

    public int capacity() {
        return mask + 1;
    }
}
