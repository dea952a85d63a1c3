package dev.stagger.jobs.internal;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.List;
import java.util.concurrent.Semaphore;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;

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
    /** The longest a claim waits for more handlers to free up: see {@link #gather()}. */
    static final long MAX_GATHER_NANOS = 2_000_000;
    /**
     * The longest claims start after a {@link JobStore.Floor} before one looks from the head of the
     * queue again, on the pool's clock: how late a job that ranks ahead of the last claimed one is
     * seen when nothing wakes the fetcher for it. See {@link #floor}.
     */
    public static final long RESCAN_NANOS = 50_000_000;

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
    private volatile @Nullable Completer completer;
    private volatile boolean waitingForRoom;
    /**
     * While {@link #waitingForRoom}, how many free handlers should wake this thread: written before
     * it looks at the free handlers, read by a handler after it frees one, so one of the two sees
     * the other (and a wake that comes before the wait is kept by the pacer).
     */
    private volatile int wakeAtFree = 1;
    private volatile boolean carrying;
    private int held;
    private List<Outcome> heldOutcomes = List.of();
    /**
     * Until when ({@link System#nanoTime()}) a claim may wait for the rest of a batch: the last
     * claim that handed out jobs, plus as long as it took, at most {@link #MAX_GATHER_NANOS}; see
     * {@link #gather()}. Only the fetcher's thread uses it; volatile costs a write per claim.
     */
    private volatile long gatherUntil = System.nanoTime();
    private final int fullBatch;
    /**
     * Where the next claim starts (PostgreSQL): after the job the last claim ranked last, while the
     * pool claims back to back. A claim from the head of the queue walks the dead index entry of
     * every job claimed since the table's last vacuum (a cost that grows with the backlog drained);
     * one after the floor walks only those other workers claimed meanwhile. Jobs that rank ahead
     * of the floor (a higher priority, an earlier run-at, a job another worker gave back) are seen
     * by the next claim from the head: after a wake ({@link #wake()}: an enqueue, a NOTIFY), after
     * a claim that comes up short (the floor's priority ran out, or the queue), and at least every
     * {@link #RESCAN_NANOS}. Null: from the head. Only the fetcher's thread uses it.
     */
    private JobStore.@Nullable Floor floor;
    /** When (the pool clock's {@code nanoTime}) a claim last started at the head of the queue. */
    private long scannedFromHead;
    /** Set by {@link #wake()}: a job may have arrived ahead of the floor. */
    private volatile boolean rescan;

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
        this.fullBatch = Math.min(batchSize, concurrency);
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
        long claimStart = System.nanoTime();
        JobStore.Floor from = floor;
        long now = pacer.clock().nanoTime();
        if (from != null && (rescan || now - scannedFromHead >= RESCAN_NANOS)) {
            from = null;
        }
        if (from == null) {
            rescan = false; // before the claim: a wake while it runs makes the next one look from the head too
            scannedFromHead = now;
        }
        floor = null; // until this claim succeeds
        if (completer != null) {
            heldOutcomes = completer.takeSuccesses(Completer.MAX_BATCH);
        }
        if (completer == null || heldOutcomes.isEmpty()) { // successes are held only with a completer
            claimed = store.claim(statements, c, wanted, leaseMillis, from);
        } else {
            JobStore.CompletedAndClaimed done = store.completeAndClaim(statements, c, heldOutcomes, wanted, leaseMillis,
                    from);
            claimed = done.claimed();
            completer.storedElsewhere(heldOutcomes, done.completed());
            heldOutcomes = List.of();
        }
        giveBack(wanted - claimed.size());
        held = 0;
        if (!claimed.isEmpty()) {
            long claimEnd = System.nanoTime();
            gatherUntil = claimEnd + Math.min(claimEnd - claimStart, MAX_GATHER_NANOS);
        }
        boolean full = claimed.size() == wanted;
        if (full && store.floors()) {
            floor = JobStore.Floor.after(claimed);
        }
        for (JobStore.Claimed next : claimed) {
            dispatch.accept(next);
        }
        if (!full && from == null) {
            stopCarrying();
            pacer.await(pollNanos); // drained for now: until woken or the next poll
        }
        // short after a floor: the next claim looks from the head at once
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

    /**
     * A handler finished its job. Wakes the fetcher only once as many handlers are free as it waits
     * for: gathering a batch, it would otherwise wake for each job that ends, find too few free and
     * wait again, a thread switch per job while the pool is busy.
     */
    public void handlerFree() {
        handlers.release();
        if (waitingForRoom && handlers.availablePermits() >= wakeAtFree) {
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

    /** Wakes an idle fetcher: a job may be due, possibly ahead of where the last claim ended. */
    public void wake() {
        rescan = true;
        pacer.wake();
    }

    /** Takes a free handler and room for its outcome, for up to a batch of jobs; waits for the first; 0 once stopped. */
    private int reserve() throws InterruptedException {
        waitingForRoom = true;
        try {
            while (signals.claiming()) {
                carrying = true; // a success arrives as its handler frees: this fetcher wakes and carries it
                wakeAtFree = 1;
                if (handlers.tryAcquire()) {
                    if (unstored.tryAcquire()) {
                        gather();
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

    /**
     * Holding one free handler, waits briefly for more, so that a busy pool of short jobs claims
     * whole batches. Without it, the handlers of the last batch finish while the next claim is on
     * its way, and the pool settles into claims of part batches (in the benchmark, about half of
     * one on average), each paying a round trip and a commit. It waits only while the jobs the last
     * claim handed out may still be finishing — for at most one claim's duration after they
     * started, never more than {@link #MAX_GATHER_NANOS} — and until the batch is complete,
     * whichever comes first; a handler that frees wakes it. So jobs that run longer than a claim
     * takes see no wait, an idle pool (every handler free) none, and a job waits at most that long
     * for a handler it would have had sooner. The wait is in real time, not on the pool's clock:
     * it is about the database's speed, and must not stall a pool on a virtual clock. A claim is
     * still made only for handlers that are free when it is made.
     */
    private void gather() throws InterruptedException {
        long deadline = gatherUntil;
        wakeAtFree = fullBatch - 1; // it holds one
        while (signals.claiming() && 1 + handlers.availablePermits() < fullBatch) {
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                return;
            }
            pacer.awaitReal(left);
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
