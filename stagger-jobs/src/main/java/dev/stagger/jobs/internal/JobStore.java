package dev.stagger.jobs.internal;

import dev.stagger.RetryState;
import dev.stagger.jobs.Job;
import dev.stagger.jobs.JobError;
import dev.stagger.jobs.JobState;
import dev.stagger.jobs.LeaseLostException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.function.ToIntFunction;

/** The statements a worker pool runs, each given the connection to run on. */
public final class JobStore {
    private final JobTables tables;
    private final String queue;
    private final List<String> types;
    private final String lockedBy;
    private final String claimSql;

    public JobStore(JobTables tables, String queue, List<String> types, String lockedBy) {
        this.tables = tables;
        this.queue = queue;
        this.types = List.copyOf(types);
        this.lockedBy = lockedBy;
        this.claimSql = tables.claim(types.size());
    }

    public String lockedBy() {
        return lockedBy;
    }

    /** A claimed job and the retry state its attempt is decided with. */
    public record Claimed(Job job, RetryState retryState) {
    }

    /** Claims up to {@code limit} due jobs, best first, under a lease ending at {@code leaseUntil}. */
    public List<Claimed> claim(Connection c, int limit, long now, long leaseUntil) throws SQLException {
        List<Claimed> claimed = new ArrayList<>(limit);
        try (PreparedStatement ps = c.prepareStatement(claimSql)) {
            int i = 1;
            ps.setString(i++, lockedBy);
            ps.setLong(i++, leaseUntil);
            ps.setLong(i++, now);
            ps.setLong(i++, now);
            ps.setString(i++, queue);
            ps.setLong(i++, now);
            for (String type : types) {
                ps.setString(i++, type);
            }
            ps.setInt(i, limit);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    Job job = Rows.job(rs);
                    RetryState state = new RetryState(job.attempt(),
                            Instant.ofEpochMilli(rs.getLong("first_attempt_at")), rs.getLong("backoff_state"));
                    claimed.add(new Claimed(job, state));
                }
            }
        }
        claimed.sort(Comparator.comparing(Claimed::job, Comparator.comparingInt(Job::priority).reversed()
                .thenComparing(Job::runAt).thenComparingLong(Job::id)));
        return claimed;
    }

    /**
     * Stores outcomes in one transaction. Each change applies only if this pool still owns that
     * attempt; the result says, per outcome, whether it did.
     */
    public boolean[] apply(Connection c, List<Outcome> outcomes, long now) throws SQLException {
        boolean[] applied = new boolean[outcomes.size()];
        boolean autoCommit = c.getAutoCommit();
        c.setAutoCommit(false);
        try (PreparedStatement succeed = c.prepareStatement(tables.succeed());
             PreparedStatement retry = c.prepareStatement(tables.retry());
             PreparedStatement snooze = c.prepareStatement(tables.snooze());
             PreparedStatement dead = c.prepareStatement(tables.dead());
             PreparedStatement error = c.prepareStatement(tables.insertError())) {
            List<Integer> batched = new ArrayList<>();
            for (int i = 0; i < outcomes.size(); i++) {
                Outcome o = outcomes.get(i);
                PreparedStatement ps;
                long first;
                int from = 1;
                switch (o.kind()) {
                    case SUCCEEDED -> {
                        ps = succeed;
                        first = now;
                    }
                    case RETRY -> {
                        ps = retry;
                        ps.setLong(from++, o.backoffState());
                        first = o.runAtMillis();
                    }
                    case SNOOZE, RELEASE -> {
                        ps = snooze;
                        first = o.runAtMillis();
                    }
                    default -> {
                        ps = dead;
                        first = now;
                    }
                }
                bindOwned(ps, from, first, o.job());
                if (o.kind() == Outcome.Kind.SUCCEEDED) {
                    ps.addBatch();
                    batched.add(i);
                } else {
                    applied[i] = ps.executeUpdate() == 1;
                    if (applied[i] && o.error() != null) {
                        insertError(error, o.job().id(), o.error());
                    }
                }
            }
            if (!batched.isEmpty()) {
                int[] counts = succeed.executeBatch();
                for (int k = 0; k < counts.length; k++) {
                    // SUCCESS_NO_INFO (-2) means the driver ran it but did not count rows
                    applied[batched.get(k)] = counts[k] == 1 || counts[k] == java.sql.Statement.SUCCESS_NO_INFO;
                }
            }
            c.commit();
            return applied;
        } catch (SQLException | RuntimeException e) {
            rollbackQuietly(c);
            throw e;
        } finally {
            c.setAutoCommit(autoCommit);
        }
    }

    /** Completes the job on the caller's connection, inside the caller's transaction. */
    public void completeWithin(Connection c, Job job, long now) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(tables.succeed())) {
            bindOwned(ps, 1, now, job);
            if (ps.executeUpdate() != 1) {
                throw new LeaseLostException(job.id(), job.attempt());
            }
        }
    }

    /** Extends the lease of every job this pool holds; returns how many. */
    public int heartbeat(Connection c, long leaseUntil) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(tables.heartbeat())) {
            ps.setLong(1, leaseUntil);
            ps.setString(2, lockedBy);
            return ps.executeUpdate();
        }
    }

    /** A job taken back from a worker whose lease expired. */
    public record Rescued(long id, int attempt, JobState state) {
    }

    /**
     * Takes back jobs of this queue whose lease expired: available again at once, or dead when
     * the attempt that was lost was their last. Each one records a lease-expired error.
     *
     * @param maxAttempts the attempt limit for a job of the given type that has no limit of its own
     */
    public List<Rescued> rescue(Connection c, long now, ToIntFunction<String> maxAttempts) throws SQLException {
        record Expired(long id, String type, int attempt, int maxAttempts, String owner) {
        }
        List<Expired> expired = new ArrayList<>();
        try (PreparedStatement ps = c.prepareStatement(tables.expired())) {
            ps.setString(1, queue);
            ps.setLong(2, now);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    expired.add(new Expired(rs.getLong(1), rs.getString(2), rs.getInt(3), rs.getInt(4), rs.getString(5)));
                }
            }
        }
        List<Rescued> rescued = new ArrayList<>();
        if (expired.isEmpty()) {
            return rescued;
        }
        boolean autoCommit = c.getAutoCommit();
        c.setAutoCommit(false);
        try (PreparedStatement up = c.prepareStatement(tables.rescue());
             PreparedStatement error = c.prepareStatement(tables.insertError())) {
            for (Expired e : expired) {
                int limit = e.maxAttempts() > 0 ? e.maxAttempts()
                        : maxAttempts.applyAsInt(e.type());
                JobState next = e.attempt() >= limit ? JobState.DEAD : JobState.AVAILABLE;
                up.setString(1, next.name());
                up.setLong(2, now);
                if (next == JobState.DEAD) {
                    up.setLong(3, now);
                } else {
                    up.setNull(3, java.sql.Types.BIGINT);
                }
                up.setLong(4, e.id());
                up.setLong(5, now);
                up.setInt(6, e.attempt());
                if (up.executeUpdate() == 1) {
                    insertError(error, e.id(), new JobError(e.attempt(), java.time.Instant.ofEpochMilli(now),
                            JobError.LEASE_EXPIRED, "worker " + e.owner() + " stopped extending its lease", ""));
                    rescued.add(new Rescued(e.id(), e.attempt(), next));
                }
            }
            c.commit();
            return rescued;
        } catch (SQLException | RuntimeException e) {
            rollbackQuietly(c);
            throw e;
        } finally {
            c.setAutoCommit(autoCommit);
        }
    }

    /** Binds the time the statement sets, then the guard that this pool owns the attempt, from parameter {@code from}. */
    private void bindOwned(PreparedStatement ps, int from, long first, Job job) throws SQLException {
        ps.setLong(from, first);
        ps.setLong(from + 1, job.id());
        ps.setString(from + 2, lockedBy);
        ps.setInt(from + 3, job.attempt());
    }

    private static void insertError(PreparedStatement ps, long jobId, JobError e) throws SQLException {
        ps.setLong(1, jobId);
        ps.setInt(2, e.attempt());
        ps.setLong(3, e.failedAt().toEpochMilli());
        ps.setString(4, e.exceptionClass());
        ps.setString(5, e.message());
        ps.setString(6, e.stackTrace());
        ps.executeUpdate();
    }

    private static void rollbackQuietly(Connection c) {
        try {
            c.rollback();
        } catch (SQLException ignored) {
            // the connection is likely gone; the caller reconnects
        }
    }
}
