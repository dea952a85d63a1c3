package dev.stagger.kafka.internal;

import java.util.concurrent.atomic.AtomicInteger;

/**
 * A bounded number of places shared by one consumer's lanes: the records key order holds
 * ({@link KeyOrder}), the retries kept in memory ({@link MemoryRetries}). Thread-safe, lock-free.
 */
final class Places {
    private final int max;
    private final AtomicInteger taken = new AtomicInteger();

    Places(int max) {
        this.max = max;
    }

    /** Takes a place; false when all {@code max} are taken. */
    boolean take() {
        while (true) {
            int now = taken.get();
            if (now >= max) {
                return false;
            }
            if (taken.compareAndSet(now, now + 1)) {
                return true;
            }
        }
    }

    /** Gives back {@code n} places. */
    void giveBack(int n) {
        if (n > 0) {
            taken.addAndGet(-n);
        }
    }

    /** Places taken now. */
    int taken() {
        return taken.get();
    }
}
