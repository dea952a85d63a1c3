package dev.stagger;

import java.util.concurrent.Future;
import org.jspecify.annotations.Nullable;

/** One running attempt; a sync one is also the task its executor runs. */
final class HedgeAttempt implements Runnable {
    final HedgedExecution<?> call;
    final int number;
    final boolean hedge;
    final CircuitBreaker.@Nullable Permit permit;
    final long startNanos;
    /** What cancels it; set before it can finish (sync) or once its future exists (async). */
    volatile @Nullable Future<?> handle;
    /** Set under the lock once its outcome is taken or it is cancelled. */
    volatile boolean done;
    /** The attempt timeout's timer, when the policy has an attempt timeout. */
    volatile Clock.@Nullable Cancellable timeout;
    /** What a sync retry inside it decided, read on its thread as it ended. */
    Ambient.@Nullable Decided inner;

    HedgeAttempt(HedgedExecution<?> call, int number, boolean hedge, CircuitBreaker.@Nullable Permit permit, long startNanos) {
        this.call = call;
        this.number = number;
        this.hedge = hedge;
        this.permit = permit;
        this.startNanos = startNanos;
    }

    /** Runs a sync attempt on the executor's thread, inside this call as a retry in it sees it. */
    @Override
    public void run() {
        if (done) {
            return;
        }
        call.runAttempt(this);
    }

    /** Cancels the attempt timeout's timer, if one is armed. */
    void cancelTimeout() {
        Clock.@Nullable Cancellable t = timeout;
        if (t != null) {
            timeout = null;
            t.cancel();
        }
    }

    /** Cancels the attempts' handles (null: none); never under the call's lock. */
    static void cancelAll(Future<?> @Nullable [] handles) {
        if (handles == null) {
            return;
        }
        for (Future<?> f : handles) {
            if (f != null) {
                f.cancel(true); // interrupts a sync attempt's thread; cancels an async attempt's future
            }
        }
    }
}
