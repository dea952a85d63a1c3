package dev.stagger;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * A {@link CircuitBreaker}'s closed phase, which is also the permit it issues: the current bucket
 * of the sliding window and the sealed ones before it. {@link SlidingWindow} records into it.
 */
final class ClosedPhase extends CircuitBreaker.Phase {
    private static final VarHandle HEAD;
    private static final VarHandle DECIDING;

    static {
        try {
            MethodHandles.Lookup l = MethodHandles.lookup();
            HEAD = l.findVarHandle(ClosedPhase.class, "head", WindowBucket.class);
            DECIDING = l.findVarHandle(ClosedPhase.class, "deciding", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /** The current bucket; replaced (after being sealed) when the window moves. */
    volatile WindowBucket head;
    /** Sealed buckets by epoch modulo the bucket count (rate mode only). */
    final AtomicReferenceArray<WindowBucket> ring;
    /**
     * Threads about to try the compare-and-set that trips this phase; never lowered by the one
     * that succeeds. Zero therefore means the word is not TRIPPED, and the permission check
     * can grant without reading the word every outcome writes.
     */
    volatile int deciding;

    ClosedPhase(WindowBucket head, int bucketCount) {
        this.head = head;
        this.ring = new AtomicReferenceArray<>(bucketCount);
    }

    /** A phase that continues an earlier one's sealed buckets. */
    ClosedPhase(WindowBucket head, AtomicReferenceArray<WindowBucket> ring) {
        this.head = head;
        this.ring = ring;
    }

    @Override
    boolean tripping() {
        return (head.word & BreakerWord.TRIPPED) != 0;
    }

    @Override
    public boolean isGranted() {
        return true;
    }

    /** Replaces {@code expected} as the head (the bucket after it); false when another thread did. */
    boolean casHead(WindowBucket expected, WindowBucket next) {
        return HEAD.compareAndSet(this, expected, next);
    }

    /** Announces a thread about to try the compare-and-set that trips this phase. */
    void announceDecision() {
        DECIDING.getAndAdd(this, 1);
    }

    /** Withdraws {@link #announceDecision()} after a compare-and-set that failed. */
    void withdrawDecision() {
        DECIDING.getAndAdd(this, -1);
    }

    /** Files a sealed bucket in the ring; a later bucket is never replaced by an earlier one. */
    void publishSealed(WindowBucket sealed) {
        int index = (int) Math.floorMod(sealed.epoch, (long) ring.length());
        while (true) {
            WindowBucket current = ring.get(index);
            if (current != null && current.seq >= sealed.seq) {
                return;
            }
            if (ring.compareAndSet(index, current, sealed)) {
                return;
            }
        }
    }

    long slowCalls(long epoch, int bucketCount) {
        long slow = 0;
        WindowBucket h = head;
        if (h.epoch > epoch - bucketCount) {
            slow += h.slow.sum();
        }
        for (int i = 0; i < ring.length(); i++) {
            WindowBucket b = ring.get(i);
            if (b != null && b != h && b.epoch > epoch - bucketCount) {
                slow += b.slow.sum();
            }
        }
        return slow;
    }

    @Override
    public String toString() {
        return "Permit{closed}";
    }
}
