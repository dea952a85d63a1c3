package dev.stagger;

import dev.stagger.internal.LimitAlgorithm;
import java.util.ArrayDeque;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.ReentrantLock;
import org.jspecify.annotations.Nullable;

/**
 * A {@link Bulkhead}'s permits at run time.
 *
 * <p>Taking a permit without waiting is a compare-and-set on the in-flight count, refused while
 * callers are queued (they came first). Waiting callers queue in FIFO order under a
 * {@link ReentrantLock} held only to change the queue and hand permits over, never across a wait:
 * a waiter is a {@link CompletableFuture} completed with {@code true} when a permit is handed to it
 * and {@code false} when its wait ends first (a task on the clock), so a sync caller blocks on it
 * (virtual threads unmount) and an async one chains on it.
 *
 * <p>The count in flight and the queue's size are one word ({@link #counts}: the count in the low
 * half, the size in the high half), so the checks that must see both are one compare-and-set: a
 * permit taken without waiting is refused once a caller is queued, and a permit given back while
 * nobody is queued is freed by one compare-and-set, no lock; a caller that queues meanwhile changes
 * the word, so the release either came first (the caller finds the room free as it queues) or sees
 * the caller and hands the room over under the lock. The count never dips and rises again while a
 * caller waits.
 */
final class BulkheadPermits {
    /** The permit of a fixed bulkhead: nothing to remember, so nothing allocated. */
    static final Permit FIXED = new Permit(0, 0);

    private final Bulkhead config;
    private final LimitAlgorithm algorithm;
    private final boolean adaptive;
    private final Clock clock;
    /** The count in flight (low 32 bits) and the queue's size (high 32 bits, written under the lock). */
    private final AtomicLong counts = new AtomicLong();
    private final LongAdder refusals = new LongAdder();
    private final ReentrantLock lock = new ReentrantLock();
    /** Guarded by {@link #lock}. */
    private final ArrayDeque<Waiter> waiters = new ArrayDeque<>();

    BulkheadPermits(Bulkhead config, LimitAlgorithm algorithm, boolean adaptive) {
        this.config = config;
        this.algorithm = algorithm;
        this.adaptive = adaptive;
        this.clock = config.clock();
    }

    /** A permit if one is free now and nobody is queued for one, else null; never waits, never counts a refusal. */
    @Nullable Permit tryAcquire() {
        int n = claim(true);
        return n < 0 ? null : permit(n);
    }

    /**
     * A permit, waiting up to the bulkhead's {@code maxWait} on the calling thread for one; null
     * (a refusal, counted) when none was free in time.
     *
     * @throws InterruptedException when interrupted while waiting (no permit is then held)
     */
    @Nullable Permit acquire() throws InterruptedException {
        Permit p = tryAcquire();
        if (p != null) {
            return p;
        }
        Waiter w = enqueue();
        if (w == null) {
            return refused();
        }
        boolean granted;
        try {
            granted = w.get();
        } catch (InterruptedException e) {
            if (w.end()) {
                forget(w);
                w.complete(false); // cancels its timeout
            } else {
                free(); // granted as the interrupt came: give it back
            }
            throw e;
        } catch (java.util.concurrent.ExecutionException e) {
            throw new IllegalStateException(e); // a waiter is only ever completed with a value
        }
        return granted ? permit(w.inFlight) : refused();
    }

    /**
     * A permit without blocking: completed at once when one is free, later when one is handed over,
     * with null (a refusal, counted) when none was within {@code maxWait}.
     */
    CompletableFuture<@Nullable Permit> acquireAsync() {
        Permit p = tryAcquire();
        if (p != null) {
            return CompletableFuture.completedFuture(p);
        }
        Waiter w = enqueue();
        if (w == null) {
            return CompletableFuture.completedFuture(refused());
        }
        return w.thenApply(granted -> granted ? permit(w.inFlight) : refused());
    }

    /**
     * Gives a permit back and hands it to the first waiter, if any.
     *
     * @param drop whether the attempt failed in a way that says the downstream is overloaded
     */
    void release(Permit permit, boolean drop) {
        if (adaptive) {
            long end = clock.nanoTime();
            if (drop) {
                algorithm.onDrop(permit.startNanos, end);
            } else {
                algorithm.onSample(permit.startNanos, end, permit.inFlight);
            }
        }
        free();
    }

    /** Gives back a permit whose attempt never ran: no sample for the adaptive limit. */
    void giveBack(Permit permit) {
        free();
    }

    /**
     * Nobody queued: one compare-and-set frees the room. Callers queued: under the queue's lock the
     * permit goes straight to the first whose wait has not ended (no caller barges ahead of the
     * queue), unless the adaptive limit has fallen to the count or below (the room is given up
     * instead). The woken run after the lock.
     */
    private void free() {
        for (long c = counts.get(); queued(c) == 0; c = counts.get()) {
            if (counts.compareAndSet(c, c - 1)) {
                return;
            }
        }
        Waiter granted;
        lock.lock();
        try {
            int n = inFlight(); // this permit's included
            granted = !waiters.isEmpty() && n <= algorithm.limit() ? grantNext(n) : null;
            if (granted == null) {
                counts.decrementAndGet();
                if (!waiters.isEmpty()) { // the limit fell and grew again, or every wait had ended
                    granted = handOver();
                }
            }
        } finally {
            lock.unlock();
        }
        wake(granted);
    }

    int limit() {
        return algorithm.limit();
    }

    int inFlight() {
        return (int) counts.get();
    }

    int waiting() {
        return queued(counts.get());
    }

    private static int queued(long counts) {
        return (int) (counts >>> 32);
    }

    /** Under the lock: the queue's size into the high half of {@link #counts}. */
    private void setQueued() {
        long size = waiters.size();
        long c;
        do {
            c = counts.get();
        } while (!counts.compareAndSet(c, size << 32 | (c & 0xFFFF_FFFFL)));
    }

    long refusals() {
        return refusals.sum();
    }

    /**
     * Takes one unit of room under the limit, refused while callers are queued when
     * {@code notPastQueue}; the in-flight count with it, or -1 when there is none.
     */
    private int claim(boolean notPastQueue) {
        int limit = algorithm.limit();
        while (true) {
            long c = counts.get();
            int n = (int) c;
            if (n >= limit || notPastQueue && queued(c) > 0) {
                return -1;
            }
            if (counts.compareAndSet(c, c + 1)) {
                return n + 1;
            }
        }
    }

    private Permit permit(int inFlightWithIt) {
        return adaptive ? new Permit(clock.nanoTime(), inFlightWithIt) : FIXED;
    }

    private @Nullable Permit refused() {
        refusals.increment();
        return null;
    }

    /** Queues a waiter (null without a {@code maxWait}) and starts its wait on the clock. */
    private @Nullable Waiter enqueue() {
        long maxWait = config.maxWaitNanos();
        if (maxWait == 0) {
            return null;
        }
        Waiter w = new Waiter();
        Waiter granted;
        lock.lock();
        try {
            waiters.addLast(w);
            setQueued();
            granted = handOver(); // room freed before this waiter was visible to the releaser
        } finally {
            lock.unlock();
        }
        wake(granted);
        if (!w.isDone()) {
            Clock.Cancellable timeout = clock.schedule(() -> {
                if (w.end()) {
                    forget(w);
                    w.complete(false);
                }
            }, maxWait);
            w.whenComplete((ok, ignored) -> timeout.cancel());
        }
        return w;
    }

    /**
     * Hands free room to the waiters at the head of the queue, under the lock; returns them linked
     * through {@link Waiter#next}, to be woken once the lock is released (what a woken async
     * caller runs next must not run under it).
     */
    private @Nullable Waiter handOver() {
        Waiter first = null;
        Waiter last = null;
        while (!waiters.isEmpty()) {
            int n = claim(false); // under the lock, for the queue's head
            if (n < 0) {
                break;
            }
            Waiter head = grantNext(n);
            if (head == null) {
                counts.decrementAndGet(); // every wait left had ended: the room is not used
                break;
            }
            if (last == null) {
                first = head;
            } else {
                last.next = head;
            }
            last = head;
        }
        return first;
    }

    /**
     * Under the lock: grants a unit of room ({@code inFlightWithIt} counting it) to the first
     * waiter whose wait has not ended, taking it and any ended ones before it off the queue.
     *
     * @return that waiter, or null when none is left
     */
    private @Nullable Waiter grantNext(int inFlightWithIt) {
        while (!waiters.isEmpty()) {
            Waiter head = waiters.pollFirst();
            setQueued();
            head.inFlight = inFlightWithIt;
            if (head.grant()) {
                return head;
            } // its wait ended meanwhile: the room goes to the next one
        }
        return null;
    }

    private static void wake(@Nullable Waiter granted) {
        while (granted != null) {
            Waiter next = granted.next;
            granted.next = null;
            granted.complete(true);
            granted = next;
        }
    }

    private void forget(Waiter w) {
        lock.lock();
        try {
            if (waiters.remove(w)) {
                setQueued();
            }
        } finally {
            lock.unlock();
        }
    }

    /**
     * A caller queued for a permit. Whether it got one is decided once, by compare-and-set on its
     * state (a hand-over against the end of its wait); the future is completed afterwards.
     */
    private static final class Waiter extends CompletableFuture<Boolean> {
        private static final int WAITING = 0;
        private static final int GRANTED = 1;
        private static final int ENDED = 2;
        private final AtomicInteger state = new AtomicInteger(WAITING);
        /** The in-flight count with the permit handed over; written before it is granted, read once woken. */
        volatile int inFlight;
        /** The next waiter granted in the same hand-over; only while waking them. */
        @Nullable Waiter next;

        boolean grant() {
            return state.compareAndSet(WAITING, GRANTED);
        }

        /** Ends the wait without a permit; false when one was granted first. */
        boolean end() {
            return state.compareAndSet(WAITING, ENDED);
        }
    }

    /** A permit held by one attempt: when it was taken and how many were in flight with it, for the adaptive limit. */
    static final class Permit {
        final long startNanos;
        final int inFlight;

        Permit(long startNanos, int inFlight) {
            this.startNanos = startNanos;
            this.inFlight = inFlight;
        }
    }
}
