package dev.stagger.internal;

import dev.stagger.Clock;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

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

    @Override
    public Cancellable schedule(Runnable task, long delayNanos) {
        ScheduledFuture<?> f = Timer.EXECUTOR.schedule(
                () -> ForkJoinPool.commonPool().execute(task), Math.max(0, delayNanos), TimeUnit.NANOSECONDS);
        return () -> f.cancel(false);
    }

    /** One daemon timer thread, created on first use; it only hands tasks to the common pool. */
    private static final class Timer {
        static final ScheduledThreadPoolExecutor EXECUTOR = new ScheduledThreadPoolExecutor(1, r -> {
            Thread t = new Thread(r, "stagger-timer");
            t.setDaemon(true);
            return t;
        });

        static {
            EXECUTOR.setRemoveOnCancelPolicy(true);
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
