package dev.stagger.jobs.internal;

import dev.stagger.RetryPolicy;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.List;
import java.util.function.BooleanSupplier;
import java.util.function.Function;

/**
 * The pool's rescue rule, for its maintenance thread and for {@code runAvailable} alike: every
 * expired lease of the queue is taken back, a batch ({@code JobStore.RESCUE_BATCH} jobs) per
 * transaction while batches come back full, each lost attempt decided as a failed one (see
 * {@link JobRunner#lost}) under its type's policy and reported. Stops between batches when the
 * pool stops claiming. Used by one thread at a time.
 */
public final class Rescuer {
    private final JobStore store;
    private final JobRunner runner;
    private final Function<String, RetryPolicy> policyFor;
    private final PoolEvents events;
    private final BooleanSupplier claiming;

    /**
     * @param policyFor a job type's retry policy
     * @param claiming whether the pool still claims: a rescue stops between batches once it does not
     */
    public Rescuer(JobStore store, JobRunner runner, Function<String, RetryPolicy> policyFor, PoolEvents events,
                   BooleanSupplier claiming) {
        this.store = store;
        this.runner = runner;
        this.policyFor = policyFor;
        this.events = events;
        this.claiming = claiming;
    }

    /** Takes back every expired lease of the queue on {@code c}, a batch per transaction. */
    public void rescueAll(Connection c) throws SQLException {
        List<JobStore.Rescued> rescued;
        do {
            rescued = store.rescue(c, lost -> runner.lost(lost, policyFor.apply(lost.claimed().job().type())));
            rescued.forEach(r -> events.rescued(r.outcome()));
        } while (rescued.size() == JobStore.RESCUE_BATCH && claiming.getAsBoolean());
    }
}
