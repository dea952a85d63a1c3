package dev.stagger.jobs.internal;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.List;
import java.util.concurrent.Semaphore;
import java.util.function.Consumer;

/**
 * The pool's fetcher thread: claims due jobs and hands each to a handler. It claims only as many
 * jobs as the pool has free handlers for (and room for their outcomes until the completer stores
 * them), so a claimed job starts at once and a busy pool leaves the rest of the queue to other
 * workers. When the queue is drained it waits for a wake-up (an enqueue, NOTIFY) or the poll
 * interval, on the pool's clock. Runs on one thread, in a {@link ReconnectingLoop}.
 */
public final class Fetcher implements ReconnectingLoop.Step {
    private final JobStore store;
    private final PoolSignals signals;
    private final Pacer pacer;
    private final int batchSize;
    private final long leaseMillis;
    private final long pollNanos;
    private final Semaphore handlers;
    private final Semaphore unstored;
    private final Consumer<JobStore.Claimed> dispatch;
    private final Statements statements = new Statements();
    private volatile boolean waitingForRoom;
    private int held;

    /**
     * @param concurrency handler threads; a job is claimed only for a free one
     * @param unstoredLimit claimed jobs whose outcome is not stored yet, at most
     * @param dispatch runs a claimed job on a handler thread
     */
    public Fetcher(JobStore store, PoolSignals signals, Pacer pacer, int concurrency, int unstoredLimit, int batchSize,
                   long leaseMillis, long pollNanos, Consumer<JobStore.Claimed> dispatch) {
        this.store = store;
        this.signals = signals;
        this.pacer = pacer;
        this.batchSize = batchSize;
        this.leaseMillis = leaseMillis;
        this.pollNanos = pollNanos;
        this.handlers = new Semaphore(concurrency);
        this.unstored = new Semaphore(unstoredLimit);
        this.dispatch = dispatch;
    }

    @Override
    public void run(Connection c) throws SQLException, InterruptedException {
        int wanted = reserve();
        if (wanted == 0) {
            return; // stopped
        }
        held = wanted;
        List<JobStore.Claimed> claimed = store.claim(statements, c, wanted, leaseMillis);
        giveBack(wanted - claimed.size());
        held = 0;
        for (JobStore.Claimed next : claimed) {
            dispatch.accept(next);
        }
        if (claimed.size() < wanted) {
            pacer.await(pollNanos); // drained for now: until woken or the next poll
        }
    }

    @Override
    public void failed() {
        giveBack(held);
        held = 0;
    }

    /** A handler finished its job. */
    public void handlerFree() {
        handlers.release();
        if (waitingForRoom) {
            pacer.wake();
        }
    }

    /** The completer stored {@code n} outcomes. */
    public void stored(int n) {
        unstored.release(n);
        if (waitingForRoom) {
            pacer.wake();
        }
    }

    /** Wakes an idle fetcher: a job may be due. */
    public void wake() {
        pacer.wake();
    }

    /** Takes a free handler and room for its outcome, for up to a batch of jobs; waits for the first; 0 once stopped. */
    private int reserve() throws InterruptedException {
        waitingForRoom = true;
        try {
            while (signals.claiming()) {
                if (handlers.tryAcquire()) {
                    if (unstored.tryAcquire()) {
                        int more = Math.min(batchSize - 1, Math.min(handlers.availablePermits(), unstored.availablePermits()));
                        if (more > 0 && handlers.tryAcquire(more)) {
                            if (unstored.tryAcquire(more)) {
                                return 1 + more;
                            }
                            handlers.release(more);
                        }
                        return 1;
                    }
                    handlers.release();
                }
                pacer.await(pollNanos);
            }
            return 0;
        } finally {
            waitingForRoom = false;
        }
    }

    private void giveBack(int n) {
        if (n > 0) {
            handlers.release(n);
            unstored.release(n);
        }
    }
}
