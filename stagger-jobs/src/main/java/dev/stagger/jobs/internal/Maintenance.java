package dev.stagger.jobs.internal;

import dev.stagger.jobs.JobState;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.Map;

/**
 * The pool's maintenance thread, while the pool claims: each task on its own cadence on the
 * pool's clock, the first run of each at start.
 * <ul>
 *   <li>rescue, every {@code rescueInterval}: jobs of the queue whose lease expired are decided as
 *       failed attempts (see {@link Rescuer}); a lease that expires at {@code t} is taken back by
 *       {@code t + rescueInterval} plus the pass's own time;</li>
 *   <li>purge, every {@code purgeInterval}, when retentions are set: finished jobs older than
 *       their state's retention are deleted;</li>
 *   <li>stats, every {@code statsInterval} (if not zero): the queue's depth and lag, reported.</li>
 * </ul>
 * Runs in a {@link ReconnectingLoop}; a task that failed runs again after reconnecting.
 */
public final class Maintenance implements ReconnectingLoop.Step {
    private static final int PURGE_BATCH = 1000;

    private final JobStore store;
    private final Rescuer rescuer;
    private final PoolEvents events;
    private final PoolSignals signals;
    private final Pacer pacer;
    private final long rescueNanos;
    private final Map<JobState, Long> retentionMillis;
    private final long purgeNanos;
    private final long statsNanos;
    private long nextRescue;
    private long nextPurge;
    private long nextStats;

    /**
     * @param retentionMillis per finished state, how long its jobs are kept; empty for no purge
     * @param statsNanos how often the queue is measured; 0 never
     */
    public Maintenance(JobStore store, Rescuer rescuer, PoolEvents events, PoolSignals signals, Pacer pacer,
                       long rescueNanos, Map<JobState, Long> retentionMillis, long purgeNanos, long statsNanos) {
        this.store = store;
        this.rescuer = rescuer;
        this.events = events;
        this.signals = signals;
        this.pacer = pacer;
        this.rescueNanos = rescueNanos;
        this.retentionMillis = Map.copyOf(retentionMillis);
        this.purgeNanos = purgeNanos;
        this.statsNanos = statsNanos;
        long now = pacer.clock().nanoTime();
        this.nextRescue = now;
        this.nextPurge = now;
        this.nextStats = now;
    }

    @Override
    public void run(Connection c) throws SQLException, InterruptedException {
        long now = pacer.clock().nanoTime();
        if (now - nextRescue >= 0) {
            rescuer.rescueAll(c);
            nextRescue = now + rescueNanos;
        }
        if (!retentionMillis.isEmpty() && now - nextPurge >= 0) {
            purge(c);
            nextPurge = now + purgeNanos;
        }
        if (statsNanos > 0 && now - nextStats >= 0) {
            events.measured(JobStore.stats(c, store.tables(), pacer.clock(), store.queue()));
            nextStats = now + statsNanos;
        }
        pacer.awaitUntil(nextDue(), () -> !signals.claiming());
    }

    private void purge(Connection c) throws SQLException {
        for (Map.Entry<JobState, Long> e : retentionMillis.entrySet()) {
            int deleted = JobStore.purge(c, store.tables(), pacer.clock(), e.getKey(), e.getValue(), store.queue(),
                    PURGE_BATCH);
            if (deleted > 0) {
                events.purged(store.queue(), e.getKey(), deleted);
            }
        }
    }

    private long nextDue() {
        long next = nextRescue;
        if (!retentionMillis.isEmpty() && nextPurge - next < 0) {
            next = nextPurge;
        }
        if (statsNanos > 0 && nextStats - next < 0) {
            next = nextStats;
        }
        return next;
    }
}
