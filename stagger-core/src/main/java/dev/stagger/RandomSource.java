package dev.stagger;

import java.util.SplittableRandom;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Where jitter gets its random numbers. Injectable so that tests and the simulator are
 * deterministic: the same seed gives the same schedule.
 */
@FunctionalInterface
public interface RandomSource {

    /** @return a uniformly distributed value in [0, 1) */
    double nextDouble();

    /** Thread-local randomness: uncontended and allocation-free; the default. */
    static RandomSource threadLocal() {
        return () -> ThreadLocalRandom.current().nextDouble();
    }

    /**
     * A seeded, reproducible source. Thread-safe (guarded by a lock, never held while blocking);
     * for reproducible results use it from one thread, as the simulator does.
     */
    static RandomSource seeded(long seed) {
        SplittableRandom random = new SplittableRandom(seed);
        ReentrantLock lock = new ReentrantLock();
        return () -> {
            lock.lock();
            try {
                return random.nextDouble();
            } finally {
                lock.unlock();
            }
        };
    }

    /** Replays the given values in order, cycling; for tests that pin exact schedules. */
    static RandomSource sequence(double... values) {
        if (values.length == 0) {
            throw new IllegalArgumentException("values must not be empty");
        }
        for (double v : values) {
            if (!(v >= 0.0 && v < 1.0)) {
                throw new IllegalArgumentException("values must be in [0, 1), got " + v);
            }
        }
        double[] copy = values.clone();
        java.util.concurrent.atomic.AtomicInteger next = new java.util.concurrent.atomic.AtomicInteger();
        return () -> copy[Math.floorMod(next.getAndIncrement(), copy.length)];
    }
}
