package dev.stagger;

import dev.stagger.internal.LimitAlgorithm;
import java.util.ArrayDeque;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
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
 * (virtual threads unmount) and an async one chains on it. A release decrements the count, then
 * looks at the queue: the count and the queue's size are both volatile, so a caller queueing while
 * a permit is released either sees the freed room itself or is seen by the releaser, never neither.
 */
final class BulkheadPermits {
    /** The permit of a fixed bulkhead: nothing to remember, so nothing allocated. */
    static final Permit FIXED = new Permit(0, 0);

    private final Bulkhead config;
    private final LimitAlgorithm algorithm;
    private final boolean adaptive;
    private final Clock clock;
    private final AtomicInteger inFlight = new AtomicInteger();
    private final LongAdder refusals = new LongAdder();
    private final ReentrantLock lock = new ReentrantLock();
    /** Guarded by {@link #lock}. */
    private final ArrayDeque<Waiter> waiters = new ArrayDeque<>();
    /** The queue's size, written under the lock, read without it. */
    private volatile int waiting;

    BulkheadPermits(Bulkhead config, LimitAlgorithm algorithm, boolean adaptive) {
        this.config = config;
        this.algorithm = algorithm;
        this.adaptive = adaptive;
        this.clock = config.clock();
    }

    /** A permit if one is free now and nobody is queued for one, else null; never waits, never counts a refusal. */
    @Nullable Permit tryAcquire() {
        if (waiting > 0) {
            return null;
        }
        int n = claim();
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
     * Under the queue's lock, so a caller that queues while the permit is given back is either seen
     * by this release (and handed the room) or sees the room free itself: the count in flight never
     * dips and rises again while a caller waits. Callers wait: the permit goes straight to the first
     * whose wait has not ended (no caller barges ahead of the queue), unless the adaptive limit has
     * fallen to the count or below (the room is given up instead). The woken run after the lock.
     */
    private void free() {
        Waiter granted;
        lock.lock();
        try {
            int n = inFlight.get(); // this permit's included
            granted = waiting > 0 && n <= algorithm.limit() ? grantNext(n) : null;
            if (granted == null) {
                inFlight.decrementAndGet();
                if (waiting > 0) { // the limit fell and grew again, or every wait had ended
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
        return inFlight.get();
    }

    int waiting() {
        return waiting;
    }

    long refusals() {
        return refusals.sum();
    }

    /** Takes one unit of room under the limit; the in-flight count with it, or -1 when there is none. */
    private int claim() {
        int limit = algorithm.limit();
        while (true) {
            int n = inFlight.get();
            if (n >= limit) {
                return -1;
            }
            if (inFlight.compareAndSet(n, n + 1)) {
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
            waiting = waiters.size();
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
            int n = claim();
            if (n < 0) {
                break;
            }
            Waiter head = grantNext(n);
            if (head == null) {
                inFlight.decrementAndGet(); // every wait left had ended: the room is not used
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
            waiting = waiters.size();
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
                waiting = waiters.size();
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
