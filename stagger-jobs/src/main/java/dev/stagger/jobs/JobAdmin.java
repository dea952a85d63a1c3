package dev.stagger.jobs;

import dev.stagger.Clock;
import dev.stagger.internal.Checks;
import dev.stagger.jdbc.StoreException;
import dev.stagger.jobs.internal.Binder;
import dev.stagger.jobs.internal.JobStore;
import dev.stagger.jobs.internal.JobTables;
import dev.stagger.jobs.internal.Rows;
import dev.stagger.jobs.internal.StoreFailures;
import dev.stagger.jobs.internal.StoredTimes;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * What an operator does with a job store: count and list jobs, inspect a job and its error
 * history, re-drive dead jobs, purge finished ones. Get it with {@link JobQueue#admin()}; the
 * {@code stagger jobs} command runs the same operations. A {@code queue} given as null means every
 * queue.
 *
 * <p>Failures of the database are thrown as the unchecked {@link StoreException}. Thread-safe.
 */
public final class JobAdmin {
    private static final int PURGE_BATCH = 1000;

    private final JobQueue store;
    private final JobTables tables;
    private final Clock clock;

    JobAdmin(JobQueue store) {
        this.store = store;
        this.tables = store.tables();
        this.clock = store.clock();
    }

    /** One job, if stored. */
    public Optional<Job> find(long id) {
        return query("find", "SELECT " + JobTables.JOB_COLUMNS + " FROM " + tables.jobs + " WHERE id = ?", id).stream()
                .findFirst();
    }

    /**
     * Jobs in {@code state}, oldest first, at most {@code limit}.
     *
     * @param queue null for every queue
     */
    public List<Job> list(JobState state, @Nullable String queue, int limit) {
        Checks.notNull("state", state);
        if (limit < 1) {
            throw new IllegalArgumentException("limit must be at least 1, got " + limit);
        }
        String sql = "SELECT " + JobTables.JOB_COLUMNS + " FROM " + tables.jobs + " WHERE state = ?"
                + (queue == null ? "" : " AND queue = ?") + " ORDER BY id LIMIT " + limit;
        return queue == null ? query("list", sql, state.name()) : query("list", sql, state.name(), queue);
    }

    /** Dead jobs, oldest first, at most {@code limit}; {@code queue} null for every queue. */
    public List<Job> dead(@Nullable String queue, int limit) {
        return list(JobState.DEAD, queue, limit);
    }

    /** How many jobs are in each state (every state present, zero when none); {@code queue} null for every queue. */
    public Map<JobState, Long> countByState(@Nullable String queue) {
        Map<JobState, Long> counts = new EnumMap<>(JobState.class);
        for (JobState s : JobState.values()) {
            counts.put(s, 0L);
        }
        String sql = "SELECT state, COUNT(*) FROM " + tables.jobs + (queue == null ? "" : " WHERE queue = ?")
                + " GROUP BY state";
        try (Connection c = store.connection(); PreparedStatement ps = c.prepareStatement(sql)) {
            if (queue != null) {
                ps.setString(1, queue);
            }
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    counts.put(JobState.valueOf(rs.getString(1)), rs.getLong(2));
                }
            }
        } catch (SQLException e) {
            throw StoreFailures.wrap("countByState", tables.jobs, e, false);
        }
        return counts;
    }

    /**
     * How {@code queue} stands: available, running and dead jobs and the wait of its oldest due
     * job, what a {@link WorkerPool} reports to {@link JobListener#measured}.
     */
    public QueueStats stats(String queue) {
        Names.name("queue", queue);
        try (Connection c = store.connection()) {
            return JobStore.stats(c, tables, clock, queue);
        } catch (SQLException e) {
            throw StoreFailures.wrap("stats", tables.jobs, e, false);
        }
    }

    /** The job's failed attempts, oldest first (kept across re-drives). */
    public List<JobError> errors(long jobId) {
        List<JobError> out = new ArrayList<>();
        try (Connection c = store.connection();
             PreparedStatement ps = c.prepareStatement("SELECT attempt, failed_at, error_class, message, stack_trace FROM "
                     + tables.errors + " WHERE job_id = ? ORDER BY failed_at, attempt")) {
            ps.setLong(1, jobId);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    out.add(Rows.error(rs));
                }
            }
        } catch (SQLException e) {
            throw StoreFailures.wrap("errors", tables.errors, e, false);
        }
        return out;
    }

    /**
     * Puts one dead job back to run now with a fresh set of attempts; its error history stays.
     *
     * @return false when the job is not dead (or not stored)
     */
    public boolean redrive(long id) {
        return redrive(" AND id = ?", id) == 1;
    }

    /** Re-drives every dead job of {@code queue} (null: of every queue); returns how many. */
    public int redriveAll(@Nullable String queue) {
        return queue == null ? redrive("") : redrive(" AND queue = ?", queue);
    }

    /** Puts dead jobs matching {@code match} (an SQL condition on its {@code params}) back to run now. */
    private int redrive(String match, Object... params) {
        String sql = "UPDATE " + tables.jobs + " SET state = 'AVAILABLE', attempt = 0, run_at = " + tables.now
                + ", finished_at = NULL WHERE state = 'DEAD'" + match;
        try (Connection c = store.connection(); PreparedStatement ps = c.prepareStatement(sql)) {
            Binder b = new Binder(ps, tables, clock).now();
            for (Object p : params) {
                if (p instanceof Long l) {
                    b.bigint(l);
                } else {
                    b.text((String) p);
                }
            }
            return ps.executeUpdate();
        } catch (SQLException e) {
            throw StoreFailures.wrap("redrive", tables.jobs, e, false);
        }
    }

    /**
     * Deletes jobs in {@code state} ({@link JobState#SUCCEEDED} or {@link JobState#DEAD}) that
     * finished more than {@code retention} ago, with their error history, in transactions of a
     * thousand; a purged job's key can be used again. A {@link WorkerPool} can do this on a
     * schedule ({@code retention(state, d)}).
     *
     * @param queue null for every queue
     * @return how many jobs were deleted
     */
    public int purge(JobState state, Duration retention, @Nullable String queue) {
        Checks.notNull("state", state);
        if (state != JobState.SUCCEEDED && state != JobState.DEAD) {
            throw new IllegalArgumentException("state must be a finished state (SUCCEEDED, DEAD), got " + state);
        }
        long retentionMillis = StoredTimes.delayMillis("retention", retention);
        try (Connection c = store.connection()) {
            return JobStore.purge(c, tables, clock, state, retentionMillis, queue, PURGE_BATCH);
        } catch (SQLException e) {
            throw StoreFailures.wrap("purge", tables.jobs, e, false);
        }
    }

    private List<Job> query(String operation, String sql, Object... params) {
        List<Job> out = new ArrayList<>();
        try (Connection c = store.connection(); PreparedStatement ps = c.prepareStatement(sql)) {
            for (int i = 0; i < params.length; i++) {
                if (params[i] instanceof Long l) {
                    ps.setLong(i + 1, l);
                } else {
                    ps.setString(i + 1, String.valueOf(params[i]));
                }
            }
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    out.add(Rows.job(rs));
                }
            }
        } catch (SQLException e) {
            throw StoreFailures.wrap(operation, tables.jobs, e, false);
        }
        return out;
    }

    @Override
    public String toString() {
        return "JobAdmin{" + tables.jobs + " on " + tables.dialect() + "}";
    }
}
