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
 *
 * <p>Each claim also stores the successes waiting in the {@link Completer}, in the same statement
 * on PostgreSQL and the same transaction on SQLite ({@link JobStore#completeAndClaim}): while the
 * pool is busy, a job costs the database one round trip and one commit shared with the rest of
 * its batch, instead of a claim's and a completion's, and SQLite sees one writer, not two. While it will claim again soon it says so ({@link #carrying()}); when it
 * goes idle, waits for room, fails or stops, the completer stores what is left.
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
    private volatile Completer completer;
    private volatile boolean waitingForRoom;
    private volatile boolean carrying;
    private int held;
    private List<Outcome> heldOutcomes = List.of();

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

    /** The completer whose successes this fetcher stores with its claims. */
    public void completer(Completer completer) {
        this.completer = completer;
    }

    /** True while this fetcher will store the waiting successes with a claim it is about to make. */
    public boolean carrying() {
        return carrying;
    }

    @Override
    public void run(Connection c) throws SQLException, InterruptedException {
        int wanted = reserve();
        if (wanted == 0) {
            stopCarrying();
            return; // stopped
        }
        held = wanted;
        Completer completer = this.completer;
        List<JobStore.Claimed> claimed;
        if (completer != null) {
            heldOutcomes = completer.takeSuccesses(Completer.MAX_BATCH);
        }
        if (heldOutcomes.isEmpty()) {
            claimed = store.claim(statements, c, wanted, leaseMillis);
        } else {
            JobStore.CompletedAndClaimed done = store.completeAndClaim(statements, c, heldOutcomes, wanted, leaseMillis);
            claimed = done.claimed();
            completer.storedElsewhere(heldOutcomes, done.completed());
            heldOutcomes = List.of();
        }
        giveBack(wanted - claimed.size());
        held = 0;
        for (JobStore.Claimed next : claimed) {
            dispatch.accept(next);
        }
        if (claimed.size() < wanted) {
            stopCarrying();
            pacer.await(pollNanos); // drained for now: until woken or the next poll
        }
    }

    @Override
    public void failed() {
        giveBack(held);
        held = 0;
        Completer completer = this.completer;
        if (completer != null) {
            completer.giveBack(heldOutcomes);
        }
        heldOutcomes = List.of();
        stopCarrying();
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
                carrying = true; // a success arrives as its handler frees: this fetcher wakes and carries it
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
                    stopCarrying(); // no room until the completer stores: it must not wait for this fetcher
                }
                pacer.await(pollNanos);
            }
            return 0;
        } finally {
            waitingForRoom = false;
        }
    }

    private void stopCarrying() {
        if (carrying) {
            carrying = false;
            Completer completer = this.completer;
            if (completer != null) {
                completer.recheck();
            }
        }
    }

    private void giveBack(int n) {
        if (n > 0) {
            handlers.release(n);
            unstored.release(n);
        }
    }
}
