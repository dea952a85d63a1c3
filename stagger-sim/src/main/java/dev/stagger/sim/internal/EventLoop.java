package dev.stagger.sim.internal;

import dev.stagger.Clock;
import org.jspecify.annotations.Nullable;

/**
 * The clock and event loop of one simulated run: virtual time that moves only from event to
 * event, events taken in due order and, among equal due times, in the order they were scheduled
 * — the same order as {@link dev.stagger.testing.VirtualClock}, so a run gives the same results
 * on either. The queue is an {@link EventQueue}; an event nobody needs to cancel ({@link #post})
 * costs no handle object.
 *
 * <p>Confined to one thread: a run, the retry engine it drives included, executes entirely on
 * the thread that calls {@link #runUntilIdle(int)}, so nothing here locks or publishes. That is
 * what makes it cheaper than {@code VirtualClock}, whose methods may be called from any thread;
 * do not hand it to code that schedules from other threads.
 */
public final class EventLoop implements Clock {
    private static final long EPOCH_MILLIS = 1_767_225_600_000L; // 2026-01-01T00:00:00Z, as VirtualClock

    private final EventQueue queue = new EventQueue();
    private long now;

    @Override
    public long nanoTime() {
        return now;
    }

    @Override
    public long currentTimeMillis() {
        return EPOCH_MILLIS + Math.floorDiv(now, 1_000_000L);
    }

    /** Advances time by {@code nanos}, running every event that falls due on the way. */
    @Override
    public void sleep(long nanos) throws InterruptedException {
        if (Thread.interrupted()) {
            throw new InterruptedException();
        }
        if (nanos <= 0) {
            return;
        }
        long target = plus(now, nanos);
        while (!queue.isEmpty() && queue.firstDue() <= target) {
            runNext();
        }
        now = Math.max(now, target);
    }

    /** Schedules {@code task} with a handle that can call it off (the retry engine's waits). */
    @Override
    public Cancellable schedule(Runnable task, long delayNanos) {
        Scheduled s = new Scheduled(task);
        queue.add(plus(now, Math.max(0, delayNanos)), s);
        return s;
    }

    /** Schedules {@code task} for which nobody needs a handle (messages, server replies). */
    public void post(Runnable task, long delayNanos) {
        queue.add(plus(now, Math.max(0, delayNanos)), task);
    }

    /**
     * Runs events in time order, advancing time to each, until none is left (including events
     * scheduled by the events themselves). Cancelled waits are dropped without running and are
     * not counted.
     *
     * @return the number of events run
     * @throws IllegalStateException if more than {@code maxEvents} would run (a runaway loop)
     */
    public int runUntilIdle(int maxEvents) {
        int ran = 0;
        while (!queue.isEmpty()) {
            if (runNext() && ++ran == maxEvents && !queue.isEmpty()) {
                throw new IllegalStateException("still busy after " + maxEvents + " events");
            }
        }
        return ran;
    }

    /** Takes the earliest event and runs it unless it was cancelled; true if it ran. */
    private boolean runNext() {
        Object item = queue.take();
        Runnable task;
        if (item instanceof Scheduled) {
            task = ((Scheduled) item).take();
            if (task == null) {
                return false; // cancelled: as if removed from the queue when it was
            }
        } else {
            task = (Runnable) item;
        }
        long due = queue.takenDue();
        if (due > now) {
            now = due;
        }
        task.run();
        return true;
    }

    /** {@code now + delay} for a non-negative delay, stopping at the end of time instead of wrapping. */
    private static long plus(long now, long delay) {
        long sum = now + delay;
        return sum < now ? Long.MAX_VALUE : sum;
    }

    /** A wait the engine may call off; cancelling drops the task so it never runs. */
    private static final class Scheduled implements Cancellable {
        private @Nullable Runnable task;

        Scheduled(Runnable task) {
            this.task = task;
        }

        @Override
        public boolean cancel() {
            if (task == null) {
                return false;
            }
            task = null;
            return true;
        }

        /** The task, once: null if it was cancelled. */
        @Nullable Runnable take() {
            Runnable t = task;
            task = null;
            return t;
        }
    }
}
