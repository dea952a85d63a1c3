package dev.stagger;

import dev.stagger.internal.SystemClock;

/**
 * The single source of time and waiting for everything in Stagger.
 *
 * <p>Retries, breakers and budgets never call {@code System.nanoTime()} or {@code Thread.sleep}
 * directly; they go through a {@code Clock}. Production code uses {@link #system()}; tests and the
 * simulator use {@link dev.stagger.testing.VirtualClock}, which runs whole retry schedules
 * instantly and deterministically.
 *
 * <p>Implementations must be thread-safe.
 */
public interface Clock {

    /** Monotonic time in nanoseconds; only differences are meaningful. */
    long nanoTime();

    /**
     * Monotonic time at millisecond granularity, cheap enough to read on every call. Breakers and
     * budgets bucket by this. Defaults to {@link #nanoTime()}.
     */
    default long coarseNanoTime() {
        return nanoTime();
    }

    /** Wall-clock time in milliseconds since the epoch (for HTTP-dates and stored records). */
    long currentTimeMillis();

    /**
     * Blocks the calling thread for {@code nanos}. A zero or negative wait returns at once without
     * touching the scheduler (a {@code Thread.sleep(0)} alone costs over a microsecond).
     *
     * @throws InterruptedException if the thread is interrupted while waiting; the interrupt
     *     status is then cleared, as with {@link Thread#sleep(long)}
     */
    void sleep(long nanos) throws InterruptedException;

    /**
     * Runs {@code task} once after {@code delayNanos}, without blocking the caller. The task must
     * not be run on the caller's thread before this method returns.
     *
     * @return a handle that cancels the task if it has not started
     */
    Cancellable schedule(Runnable task, long delayNanos);

    /** A scheduled task that can still be called off. */
    @FunctionalInterface
    interface Cancellable {
        /** @return true if the task was cancelled before it ran */
        boolean cancel();
    }

    /**
     * The real clock: {@code System.nanoTime}, a shared millisecond ticker for
     * {@link #coarseNanoTime()}, and one shared daemon scheduler thread that hands due tasks to
     * {@link java.util.concurrent.ForkJoinPool#commonPool()}, so a user's attempt never runs on
     * (and never blocks) the timer thread.
     */
    static Clock system() {
        return SystemClock.INSTANCE;
    }
}
