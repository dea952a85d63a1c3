package dev.stagger.jobs;

import dev.stagger.internal.Checks;
import java.time.Duration;

/**
 * How one queue stands: its jobs by state and how far behind it is. A {@link WorkerPool} measures
 * its queue every {@code statsInterval} and reports it to {@link JobListener#measured}; operators
 * read it with {@link JobAdmin#stats}. Succeeded jobs are not counted: they are history, kept
 * until purged.
 *
 * @param queue the queue measured
 * @param available jobs waiting for their run-at time or for a worker
 * @param running jobs claimed by a worker under a lease
 * @param dead jobs that ended without succeeding, waiting for an operator
 * @param oldestAvailableAge how long the available job that became due first has waited since its
 *     run-at time (zero when no job is due): the queue's lag
 */
public record QueueStats(String queue, long available, long running, long dead, Duration oldestAvailableAge) {

    /** Checks the components: {@code queue} not null, {@code oldestAvailableAge} not negative. */
    public QueueStats {
        Checks.notNull("queue", queue);
        Checks.nonNegative("oldestAvailableAge", oldestAvailableAge);
    }
}
