package dev.stagger.jobs.internal;

import dev.stagger.Clock;
import java.util.concurrent.Semaphore;

/**
 * How one pool thread waits: until a time on the pool's {@link Clock}, or until something wakes it
 * (a job was enqueued, a handler became free, the pool is stopping). The time is kept by the
 * clock's scheduler, never by sleeping, so on a {@link dev.stagger.testing.VirtualClock} a wait
 * ends exactly when the test moves time past it.
 *
 * <p>A wake that comes while the thread is not waiting is kept, so the next wait returns at once:
 * no wake is lost. A wait may also return early for no reason the caller can see; callers
 * re-check their condition. One thread waits; any thread wakes. Thread-safe.
 */
public final class Pacer {
    private final Clock clock;
    private final Semaphore permit = new Semaphore(0);

    public Pacer(Clock clock) {
        this.clock = clock;
    }

    public Clock clock() {
        return clock;
    }

    /** Ends the current wait, or the next one if none is in progress. */
    public void wake() {
        if (permit.availablePermits() == 0) {
            permit.release();
        }
    }

    /** Waits at most {@code nanos} on the clock, or until woken. */
    public void await(long nanos) throws InterruptedException {
        if (nanos <= 0) {
            return;
        }
        Clock.Cancellable timer = clock.schedule(this::wake, nanos);
        try {
            permit.acquire();
        } finally {
            timer.cancel();
        }
    }

    /**
     * Waits at most {@code nanos} of real time, whatever the pool's clock, or until woken: for
     * waits that are about the machine's speed rather than the pool's schedule.
     *
     * @return true when woken, false when the time ran out
     */
    public boolean awaitReal(long nanos) throws InterruptedException {
        return nanos > 0 && permit.tryAcquire(nanos, java.util.concurrent.TimeUnit.NANOSECONDS);
    }

    /**
     * Waits until the clock reads {@code deadlineNanos} (as {@link Clock#nanoTime()}), ignoring
     * wakes, unless {@code stop} becomes true first (checked after each wake).
     */
    public void awaitUntil(long deadlineNanos, java.util.function.BooleanSupplier stop) throws InterruptedException {
        long left;
        while (!stop.getAsBoolean() && (left = deadlineNanos - clock.nanoTime()) > 0) {
            await(left);
        }
    }
}
