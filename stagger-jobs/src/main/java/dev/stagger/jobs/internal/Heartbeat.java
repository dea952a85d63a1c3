package dev.stagger.jobs.internal;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.Collection;

/**
 * The pool's heartbeat thread: every {@code interval} (on the pool's clock) extends the lease of
 * every job the pool holds: those it handed to a handler and has not yet stored the outcome of
 * (see {@link JobTables#heartbeat(int)} for why not every job locked by the pool). It has its own
 * thread and connection and does nothing else, and its statement skips rows other transactions lock, so nothing another worker does (a rescue, a
 * frozen transaction, a slow purge) can hold it up: a live pool keeps its leases. After a
 * failure it beats again as soon as it has reconnected. Runs in a {@link ReconnectingLoop}.
 */
public final class Heartbeat implements ReconnectingLoop.Step {
    private final JobStore store;
    private final PoolSignals signals;
    private final Pacer pacer;
    private final long leaseMillis;
    private final long intervalNanos;
    private final Collection<Long> held;
    private long next;

    /** @param held the ids of the jobs the pool holds, read at each beat (a concurrent collection) */
    public Heartbeat(JobStore store, PoolSignals signals, Pacer pacer, long leaseMillis, long intervalNanos,
                     Collection<Long> held) {
        this.store = store;
        this.held = held;
        this.signals = signals;
        this.pacer = pacer;
        this.leaseMillis = leaseMillis;
        this.intervalNanos = intervalNanos;
        this.next = pacer.clock().nanoTime() + intervalNanos;
    }

    @Override
    public void run(Connection c) throws SQLException, InterruptedException {
        pacer.awaitUntil(next, () -> !signals.alive());
        if (!signals.alive()) {
            return;
        }
        long now = pacer.clock().nanoTime();
        store.heartbeat(c, leaseMillis, held);
        next = now + intervalNanos;
    }
}
