package dev.stagger.testing;

import dev.stagger.Clock;
import dev.stagger.internal.Checks;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.PriorityQueue;
import java.util.concurrent.locks.ReentrantLock;
import org.jspecify.annotations.Nullable;

/**
 * A clock whose time moves only when told to, so retry schedules run instantly and
 * deterministically.
 *
 * <p>{@link #sleep(long)} does not block: it records the wait, advances virtual time by it and
 * runs every scheduled task that has become due. {@link #schedule(Runnable, long)} queues the task
 * until {@link #advance(Duration)} (or a sleep, or {@link #runUntilIdle()}) reaches its time; due
 * tasks run on the thread that moved time. Thread-safe; the lock is never held while a task runs.
 */
public final class VirtualClock implements Clock {
    private static final long EPOCH_MILLIS = 1_767_225_600_000L; // 2026-01-01T00:00:00Z

    private final ReentrantLock lock = new ReentrantLock();
    private final PriorityQueue<Task> tasks = new PriorityQueue<>();
    private final List<Duration> sleeps = new ArrayList<>();
    private long now;
    private long wallOffsetMillis;
    private long sequence;

    public VirtualClock() {
        this(0);
    }

    /** @param startNanos the initial reading of {@link #nanoTime()} */
    public VirtualClock(long startNanos) {
        this.now = startNanos;
    }

    @Override
    public long nanoTime() {
        lock.lock();
        try {
            return now;
        } finally {
            lock.unlock();
        }
    }

    /** 2026-01-01T00:00:00Z plus the virtual time elapsed, plus every {@link #stepWallClock} so far. */
    @Override
    public long currentTimeMillis() {
        lock.lock();
        try {
            return EPOCH_MILLIS + wallOffsetMillis + Math.floorDiv(now, 1_000_000L);
        } finally {
            lock.unlock();
        }
    }

    /**
     * Steps the wall clock ({@link #currentTimeMillis()}) by {@code d}, forward or back, without
     * moving {@link #nanoTime()} or running any task: what an NTP step or an operator setting the
     * date does to a real machine, which monotonic time does not see.
     */
    public void stepWallClock(Duration d) {
        long millis = Checks.notNull("d", d).toMillis();
        lock.lock();
        try {
            wallOffsetMillis = Math.addExact(wallOffsetMillis, millis);
        } finally {
            lock.unlock();
        }
    }

    /** Records the wait and advances time by it at once; an interrupted thread gets the usual exception. */
    @Override
    public void sleep(long nanos) throws InterruptedException {
        if (Thread.interrupted()) {
            throw new InterruptedException();
        }
        if (nanos <= 0) {
            return;
        }
        lock.lock();
        try {
            sleeps.add(Duration.ofNanos(nanos));
        } finally {
            lock.unlock();
        }
        advance(Duration.ofNanos(nanos));
    }

    @Override
    public Cancellable schedule(Runnable task, long delayNanos) {
        lock.lock();
        try {
            Task t = new Task(plus(now, Math.max(0, delayNanos)), sequence++, task);
            tasks.add(t);
            return () -> {
                lock.lock();
                try {
                    return tasks.remove(t);
                } finally {
                    lock.unlock();
                }
            };
        } finally {
            lock.unlock();
        }
    }

    /**
     * Moves time forward by {@code d}, running each task that falls due, in time order. Time is
     * meant to be moved by one thread (the test's): two {@code advance} calls racing on different
     * threads both measure {@code d} from the time they read, so together they may move the clock
     * by less than the sum of their durations.
     */
    public void advance(Duration d) {
        if (d.isNegative()) {
            throw new IllegalArgumentException("d must not be negative, got " + d);
        }
        long target;
        lock.lock();
        try {
            target = plus(now, Checks.nanos(d));
        } finally {
            lock.unlock();
        }
        runDueTasks(target);
    }

    /**
     * Runs scheduled tasks in time order, advancing time to each, until none is left (including
     * tasks scheduled by the tasks themselves). Bounded by {@code maxTasks} to stop runaway loops.
     *
     * @return the number of tasks run
     */
    public int runUntilIdle(int maxTasks) {
        int ran = 0;
        while (ran < maxTasks) {
            Task next;
            lock.lock();
            try {
                next = tasks.poll();
                if (next == null) {
                    return ran;
                }
                now = Math.max(now, next.due);
            } finally {
                lock.unlock();
            }
            next.task.run();
            ran++;
        }
        throw new IllegalStateException("still busy after " + maxTasks + " tasks");
    }

    /** {@link #runUntilIdle(int)} with a limit of one million tasks. */
    public int runUntilIdle() {
        return runUntilIdle(1_000_000);
    }

    private void runDueTasks(long target) {
        while (true) {
            Task next;
            lock.lock();
            try {
                next = tasks.peek();
                if (next == null || next.due > target) {
                    now = Math.max(now, target);
                    return;
                }
                tasks.poll();
                now = Math.max(now, next.due);
            } finally {
                lock.unlock();
            }
            next.task.run();
        }
    }

    /** Every wait passed to {@link #sleep(long)} so far, in order. */
    public List<Duration> sleeps() {
        lock.lock();
        try {
            return Collections.unmodifiableList(new ArrayList<>(sleeps));
        } finally {
            lock.unlock();
        }
    }

    /** Number of scheduled tasks not yet run. */
    public int pendingTasks() {
        lock.lock();
        try {
            return tasks.size();
        } finally {
            lock.unlock();
        }
    }

    /** Virtual time elapsed since construction at {@code startNanos = 0}. */
    public Duration now() {
        return Duration.ofNanos(nanoTime());
    }

    /** {@code now + delay} for a non-negative delay, stopping at the end of time instead of wrapping. */
    private static long plus(long now, long delay) {
        long sum = now + delay;
        return sum < now ? Long.MAX_VALUE : sum;
    }

    private static final class Task implements Comparable<Task> {
        final long due;
        final long seq;
        final Runnable task;

        Task(long due, long seq, Runnable task) {
            this.due = due;
            this.seq = seq;
            this.task = task;
        }

        @Override
        public int compareTo(Task o) {
            int c = Long.compare(due, o.due);
            return c != 0 ? c : Long.compare(seq, o.seq);
        }

        // consistent with compareTo: seq is unique per task, so equal means the same task
        @Override
        public boolean equals(@Nullable Object o) {
            return o instanceof Task t && due == t.due && seq == t.seq;
        }

        @Override
        public int hashCode() {
            return Long.hashCode(seq);
        }
    }
}
