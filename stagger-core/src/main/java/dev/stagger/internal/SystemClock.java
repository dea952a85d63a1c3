package dev.stagger.internal;

import dev.stagger.Clock;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;
import org.jspecify.annotations.Nullable;

/** The real clock. See {@link Clock#system()}. */
public final class SystemClock implements Clock {
    public static final SystemClock INSTANCE = new SystemClock();

    private SystemClock() {
    }

    @Override
    public long nanoTime() {
        return System.nanoTime();
    }

    @Override
    public long coarseNanoTime() {
        return CoarseTicker.now();
    }

    @Override
    public long currentTimeMillis() {
        return System.currentTimeMillis();
    }

    @Override
    public void sleep(long nanos) throws InterruptedException {
        if (nanos <= 0) {
            if (Thread.interrupted()) {
                throw new InterruptedException();
            }
            return;
        }
        TimeUnit.NANOSECONDS.sleep(nanos);
    }

    /**
     * Puts {@code task} on the timer's wheel: O(1), one 32-byte entry, freed at once on cancel. The
     * task runs on the common pool no earlier than {@code delayNanos} from now and normally within
     * one wheel tick (1.05 ms) after it; see {@link Timer}.
     */
    @Override
    public Cancellable schedule(Runnable task, long delayNanos) {
        Entry entry = new Entry(Checks.notNull("task", task));
        Timer.INSTANCE.add(entry, delayNanos);
        return entry;
    }

    /** A scheduled task on the system timer's wheel; cancelling unlinks it at once. */
    static final class Entry extends TimerWheel.Node implements Cancellable {
        /** Null once cancelled or fired. */
        private @Nullable Runnable task;

        Entry(Runnable task) {
            this.task = task;
        }

        @Override
        public boolean cancel() {
            if (!Timer.INSTANCE.remove(this)) {
                return false;
            }
            task = null; // out of the wheel, so no other thread reads it any more
            return true;
        }

        void fire() {
            Runnable t = task;
            task = null;
            ForkJoinPool.commonPool().execute(t);
        }
    }

    /**
     * The one timer thread of the process, created on first use: a {@link TimerWheel} under one
     * lock, and a daemon thread that sleeps until the wheel's next event and hands due tasks to
     * {@link ForkJoinPool#commonPool()}, so a user's attempt never runs on (and never blocks) the
     * timer thread. Adding or cancelling holds the lock for a few pointer writes; the thread is
     * woken only when a new task is due before the time it planned to wake.
     *
     * <p>Accuracy: a task never starts before its delay has passed; it is handed to the common
     * pool within one tick (2^20 ns) after it, plus the timer thread's wake-up latency (the OS
     * scheduler's: small on an idle machine, milliseconds on a saturated one). When a slot of far entries
     * comes down a level, the thread moves them in batches of {@value #BATCH}, releasing the lock
     * between batches, so adds and cancels wait for one batch at most.
     */
    static final class Timer {
        static final Timer INSTANCE = new Timer();
        /** Most nodes moved or handed out per hold of the lock, so adds and cancels never wait long. */
        private static final int BATCH = 4096;

        private final ReentrantLock lock = new ReentrantLock();
        private final Condition wake = lock.newCondition();
        private final TimerWheel wheel = new TimerWheel(System.nanoTime());
        /** The tick the thread will wake at while it waits; {@code Long.MIN_VALUE} while it works. */
        private long plannedWakeTick = Long.MIN_VALUE;

        private Timer() {
            Thread t = new Thread(this::loop, "stagger-timer");
            t.setDaemon(true);
            t.start();
        }

        void add(TimerWheel.Node node, long delayNanos) {
            lock.lock();
            try {
                long tick = wheel.add(node, System.nanoTime(), delayNanos);
                if (tick < plannedWakeTick) {
                    wake.signal();
                }
            } finally {
                lock.unlock();
            }
        }

        boolean remove(TimerWheel.Node node) {
            lock.lock();
            try {
                return wheel.remove(node);
            } finally {
                lock.unlock();
            }
        }

        private void loop() {
            lock.lock();
            try {
                while (true) {
                    long now = System.nanoTime();
                    TimerWheel.Node due = wheel.expire(now, BATCH);
                    if (due != null || wheel.isBehind()) {
                        plannedWakeTick = Long.MIN_VALUE;
                        lock.unlock();
                        try {
                            fire(due);
                        } finally {
                            lock.lock();
                        }
                        continue;
                    }
                    long next = wheel.nextEventTick();
                    plannedWakeTick = next;
                    try {
                        if (next == Long.MAX_VALUE) {
                            wake.await();
                        } else {
                            long nanos = wheel.nanosUntil(next, now);
                            if (nanos > 0) {
                                wake.awaitNanos(nanos);
                            }
                        }
                    } catch (InterruptedException ignored) {
                        // nobody interrupts this thread; if someone does, it just looks again
                    }
                    plannedWakeTick = Long.MIN_VALUE;
                }
            } finally {
                lock.unlock();
            }
        }

        private static void fire(TimerWheel.@Nullable Node due) {
            for (TimerWheel.Node n = due; n != null; ) {
                TimerWheel.Node following = n.nextExpired();
                try {
                    ((Entry) n).fire();
                } catch (RuntimeException | Error e) {
                    // the common pool refused or the task is broken: the timer must keep running
                }
                n = following;
            }
        }
    }

    /**
     * Time cached at millisecond granularity by one daemon thread, so hot paths that bucket by
     * time read a volatile field (~1 ns) instead of the OS clock (~28 ns on kvm-clock VMs).
     */
    static final class CoarseTicker {
        private static final long TICK_NANOS = 1_000_000L;
        private static volatile long now = System.nanoTime();

        static {
            Thread t = new Thread(() -> {
                while (true) {
                    LockSupport.parkNanos(TICK_NANOS);
                    now = System.nanoTime();
                }
            }, "stagger-coarse-clock");
            t.setDaemon(true);
            t.start();
        }

        static long now() {
            return now;
        }
    }
}
