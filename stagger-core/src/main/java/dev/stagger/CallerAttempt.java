package dev.stagger;

import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The handle of a sync hedged call's first attempt, which runs on the caller's own thread: to
 * cancel it is to interrupt that thread, and only while the attempt still runs. The caller tells
 * {@link #returned()} as its operation returns; from then on no interrupt of this handle's can
 * reach it, and one that did (the attempt lost while it was returning) is cleared, so the caller
 * leaves the call with the interrupt status it came in with. An interrupt from elsewhere that
 * lands in the same instant is cleared with it: the one blind spot of a handshake the JDK gives no
 * finer tool for.
 */
final class CallerAttempt implements Future<Void> {
    private static final int RUNNING = 0;
    private static final int RETURNED = 1;
    private static final int INTERRUPTING = 2;
    private static final int INTERRUPTED = 3;

    private final Thread caller;
    private final AtomicInteger state = new AtomicInteger(RUNNING);

    CallerAttempt(Thread caller) {
        this.caller = caller;
    }

    /** Interrupts the caller's thread if its attempt still runs; the attempt then ends as it handles the interrupt. */
    @Override
    public boolean cancel(boolean mayInterruptIfRunning) {
        if (!state.compareAndSet(RUNNING, INTERRUPTING)) {
            return false;
        }
        caller.interrupt();
        state.set(INTERRUPTED);
        return true;
    }

    /**
     * On the caller's thread, as its operation returned or threw: closes the window for
     * {@link #cancel}, and clears the interrupt it sent if it sent one (waiting the few
     * instructions between its two steps when it is between them).
     */
    void returned() {
        if (state.compareAndSet(RUNNING, RETURNED)) {
            return;
        }
        while (state.get() != INTERRUPTED) {
            Thread.onSpinWait();
        }
        Thread.interrupted();
    }

    @Override
    public boolean isCancelled() {
        return state.get() >= INTERRUPTING;
    }

    @Override
    public boolean isDone() {
        return state.get() != RUNNING;
    }

    /** Not used: the caller reads its attempt's outcome directly. */
    @Override
    public Void get() {
        throw new UnsupportedOperationException("the caller's own attempt has no future to wait on");
    }

    @Override
    public Void get(long timeout, TimeUnit unit) {
        return get();
    }
}
