package dev.stagger.jobs;

import dev.stagger.Clock;
import dev.stagger.jdbc.Dialect;
import dev.stagger.jobs.internal.JobTables;
import dev.stagger.jobs.internal.Rows;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Types;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.regex.Pattern;
import javax.sql.DataSource;

/**
 * A durable job store in one database: enqueue jobs (on their own, in bulk, or inside the
 * caller's transaction) and operate on them (list, count, inspect dead jobs, re-drive, purge).
 * {@link WorkerPool}s built on it run the jobs.
 *
 * <p>SQLite (one file, one machine) is the embedded default; PostgreSQL lets workers on several
 * machines share the queue. The schema is created or upgraded when the queue is built. Thread-safe.
 */
public final class JobQueue {
    private static final Pattern PREFIX = Pattern.compile("[a-z][a-z0-9_]{0,40}");

    private final DataSource dataSource;
    private final JobTables tables;
    private final Clock clock;
    /** Started pools of this queue object, woken at once by enqueues made through it. */
    private final List<LocalPool> localPools = new CopyOnWriteArrayList<>();

    private record LocalPool(String queue, Runnable wake) {
    }

    private JobQueue(DataSource dataSource, JobTables tables, Clock clock) {
        this.dataSource = dataSource;
        this.tables = tables;
        this.clock = clock;
    }

    /** Starts building a queue over {@code dataSource} (SQLite or PostgreSQL). */
    public static Builder builder(DataSource dataSource) {
        return new Builder(dataSource);
    }

    // ---- enqueue ----------------------------------------------------------------------------

    /** Adds a job with a UTF-8 text payload and default options; returns its id. */
    public long enqueue(String queue, String type, String payload) throws SQLException {
        return enqueue(queue, type, utf8(payload), EnqueueOptions.defaults());
    }

    /** Adds a job with a UTF-8 text payload; returns its id (the existing job's id for a duplicate key). */
    public long enqueue(String queue, String type, String payload, EnqueueOptions options) throws SQLException {
        return enqueue(queue, type, utf8(payload), options);
    }

    /** Adds a job; returns its id, or the existing job's id when its key is already stored. */
    public long enqueue(String queue, String type, byte[] payload, EnqueueOptions options) throws SQLException {
        return enqueueAll(List.of(new JobRequest(queue, type, payload, options))).get(0);
    }

    /**
     * Adds a job using the caller's connection without committing: the job exists only if the
     * caller's transaction commits (an order row and its "send receipt" job together, or neither).
     * On PostgreSQL idle workers are woken at commit.
     */
    public long enqueue(Connection connection, String queue, String type, byte[] payload, EnqueueOptions options)
            throws SQLException {
        return insert(connection, List.of(new JobRequest(queue, type, payload, options)), new LinkedHashSet<>()).get(0);
    }

    /** {@link #enqueue(Connection, String, String, byte[], EnqueueOptions)} with a UTF-8 text payload. */
    public long enqueue(Connection connection, String queue, String type, String payload, EnqueueOptions options)
            throws SQLException {
        return enqueue(connection, queue, type, utf8(payload), options);
    }

    /** Adds many jobs in one transaction: all or none. Returns their ids in order. */
    public List<Long> enqueueAll(List<JobRequest> jobs) throws SQLException {
        try (Connection c = connection()) {
            boolean autoCommit = c.getAutoCommit();
            c.setAutoCommit(false);
            try {
                Set<String> wake = new LinkedHashSet<>();
                List<Long> ids = insert(c, jobs, wake);
                c.commit();
                for (LocalPool pool : localPools) {
                    if (wake.contains(pool.queue())) {
                        pool.wake().run();
                    }
                }
                return ids;
            } catch (SQLException | RuntimeException e) {
                c.rollback();
                throw e;
            } finally {
                c.setAutoCommit(autoCommit);
            }
        }
    }

    /** Adds many jobs with the caller's connection, without committing. */
    public List<Long> enqueueAll(Connection connection, List<JobRequest> jobs) throws SQLException {
        return insert(connection, jobs, new LinkedHashSet<>());
    }

    private List<Long> insert(Connection c, List<JobRequest> jobs, Set<String> wake) throws SQLException {
        List<Long> ids = new ArrayList<>(jobs.size());
        long now = clock.currentTimeMillis();
        boolean batched = tables.dialect() == Dialect.POSTGRESQL;
        try (PreparedStatement plain = batched
                ? c.prepareStatement(tables.insertForBatch(), new String[] {"id"}) : c.prepareStatement(tables.insert(false));
             PreparedStatement keyed = c.prepareStatement(tables.insert(true))) {
            int pending = 0;
            for (JobRequest job : jobs) {
                EnqueueOptions o = job.options();
                long runAt = o.runAtMillis(now);
                if (runAt <= now) {
                    wake.add(job.queue());
                }
                if (o.key() == null && batched) {
                    bindInsert(plain, job, runAt, now);
                    plain.addBatch();
                    pending++;
                    continue;
                }
                if (pending > 0) {
                    flushBatch(plain, ids, pending);
                    pending = 0;
                }
                PreparedStatement ps = o.key() == null ? plain : keyed;
                bindInsert(ps, job, runAt, now);
                Long id = null;
                try (ResultSet rs = ps.executeQuery()) {
                    if (rs.next()) {
                        id = rs.getLong(1);
                    }
                }
                ids.add(id != null ? id : existingId(c, o.key()));
            }
            if (pending > 0) {
                flushBatch(plain, ids, pending);
            }
        }
        if (tables.dialect() == Dialect.POSTGRESQL && !wake.isEmpty()) {
            try (PreparedStatement n = c.prepareStatement(tables.notifySql())) {
                for (String queue : wake) {
                    n.setString(1, tables.channel);
                    n.setString(2, queue);
                    n.executeQuery().close();
                }
            }
        }
        return ids;
    }

    /** Runs the batched inserts; the driver hands back their generated ids in order. */
    private static void flushBatch(PreparedStatement ps, List<Long> ids, int pending) throws SQLException {
        ps.executeBatch();
        int got = 0;
        try (ResultSet keys = ps.getGeneratedKeys()) {
            while (keys.next()) {
                ids.add(keys.getLong(1));
                got++;
            }
        }
        if (got != pending) {
            throw new SQLException("expected " + pending + " generated job ids, got " + got);
        }
    }

    private static void bindInsert(PreparedStatement ps, JobRequest job, long runAt, long now) throws SQLException {
        EnqueueOptions o = job.options();
        ps.setString(1, job.queue());
        ps.setString(2, job.type());
        ps.setBytes(3, job.payloadUnsafe());
        if (o.key() == null) {
            ps.setNull(4, Types.VARCHAR);
        } else {
            ps.setString(4, o.key());
        }
        ps.setInt(5, o.priority());
        ps.setInt(6, o.maxAttempts());
        ps.setLong(7, runAt);
        ps.setLong(8, now);
    }

    private long existingId(Connection c, String key) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(tables.idByKey())) {
            ps.setString(1, key);
            try (ResultSet rs = ps.executeQuery()) {
                if (!rs.next()) {
                    throw new SQLException("job key '" + key + "' conflicted but no job holds it");
                }
                return rs.getLong(1);
            }
        }
    }

    // ---- operators --------------------------------------------------------------------------

    /** One job, if stored. */
    public Optional<Job> find(long id) throws SQLException {
        List<Job> found = query("SELECT " + JobTables.JOB_COLUMNS + " FROM " + tables.jobs + " WHERE id = ?", id);
        return found.stream().findFirst();
    }

    /**
     * Jobs in {@code state}, oldest first, at most {@code limit}.
     *
     * @param queue null for every queue
     */
    public List<Job> list(JobState state, String queue, int limit) throws SQLException {
        if (state == null) {
            throw new IllegalArgumentException("state must not be null");
        }
        if (limit < 1) {
            throw new IllegalArgumentException("limit must be at least 1, got " + limit);
        }
        String sql = "SELECT " + JobTables.JOB_COLUMNS + " FROM " + tables.jobs + " WHERE state = ?"
                + (queue == null ? "" : " AND queue = ?") + " ORDER BY id LIMIT " + limit;
        return queue == null ? query(sql, state.name()) : query(sql, state.name(), queue);
    }

    /** Dead jobs, oldest first, at most {@code limit}; {@code queue} null for every queue. */
    public List<Job> dead(String queue, int limit) throws SQLException {
        return list(JobState.DEAD, queue, limit);
    }

    /** How many jobs are in each state (every state present, zero when none). */
    public Map<JobState, Long> countByState(String queue) throws SQLException {
        Map<JobState, Long> counts = new EnumMap<>(JobState.class);
        for (JobState s : JobState.values()) {
            counts.put(s, 0L);
        }
        String sql = "SELECT state, COUNT(*) FROM " + tables.jobs + (queue == null ? "" : " WHERE queue = ?")
                + " GROUP BY state";
        try (Connection c = connection(); PreparedStatement ps = c.prepareStatement(sql)) {
            if (queue != null) {
                ps.setString(1, queue);
            }
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    counts.put(JobState.valueOf(rs.getString(1)), rs.getLong(2));
                }
            }
        }
        return counts;
    }

    /** The job's failed attempts, oldest first (kept across re-drives). */
    public List<JobError> errors(long jobId) throws SQLException {
        List<JobError> out = new ArrayList<>();
        try (Connection c = connection();
             PreparedStatement ps = c.prepareStatement("SELECT attempt, failed_at, error_class, message, stack_trace FROM "
                     + tables.errors + " WHERE job_id = ? ORDER BY failed_at, attempt")) {
            ps.setLong(1, jobId);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    out.add(Rows.error(rs));
                }
            }
        }
        return out;
    }

    /**
     * Puts one dead job back to run now with a fresh set of attempts; its error history stays.
     *
     * @return false when the job is not dead (or not stored)
     */
    public boolean redrive(long id) throws SQLException {
        return update("UPDATE " + tables.jobs + " SET state = 'AVAILABLE', attempt = 0, run_at = ?, finished_at = NULL "
                + "WHERE id = ? AND state = 'DEAD'", clock.currentTimeMillis(), id) == 1;
    }

    /** Re-drives every dead job of {@code queue} (null: of every queue); returns how many. */
    public int redriveAll(String queue) throws SQLException {
        String sql = "UPDATE " + tables.jobs + " SET state = 'AVAILABLE', attempt = 0, run_at = ?, finished_at = NULL "
                + "WHERE state = 'DEAD'" + (queue == null ? "" : " AND queue = ?");
        long now = clock.currentTimeMillis();
        return queue == null ? update(sql, now) : update(sql, now, queue);
    }

    /**
     * Deletes succeeded jobs that finished more than {@code retention} ago, with their error
     * history; a purged job's key can be used again. Dead jobs are never purged.
     *
     * @param queue null for every queue
     * @return how many jobs were deleted
     */
    public int purgeSucceeded(Duration retention, String queue) throws SQLException {
        if (retention == null || retention.isNegative()) {
            throw new IllegalArgumentException("retention must not be negative, got " + retention);
        }
        long cutoff;
        try {
            cutoff = Math.subtractExact(clock.currentTimeMillis(), retention.toMillis());
        } catch (ArithmeticException beyondAnyStoredTime) {
            cutoff = Long.MIN_VALUE; // a retention of millions of years keeps everything
        }
        String match = " WHERE state = 'SUCCEEDED' AND finished_at < ?" + (queue == null ? "" : " AND queue = ?");
        try (Connection c = connection()) {
            boolean autoCommit = c.getAutoCommit();
            c.setAutoCommit(false);
            try {
                try (PreparedStatement ps = c.prepareStatement("DELETE FROM " + tables.errors
                        + " WHERE job_id IN (SELECT id FROM " + tables.jobs + match + ")")) {
                    bind(ps, queue == null ? new Object[] {cutoff} : new Object[] {cutoff, queue});
                    ps.executeUpdate();
                }
                int deleted;
                try (PreparedStatement ps = c.prepareStatement("DELETE FROM " + tables.jobs + match)) {
                    bind(ps, queue == null ? new Object[] {cutoff} : new Object[] {cutoff, queue});
                    deleted = ps.executeUpdate();
                }
                c.commit();
                return deleted;
            } catch (SQLException | RuntimeException e) {
                c.rollback();
                throw e;
            } finally {
                c.setAutoCommit(autoCommit);
            }
        }
    }

    // ---- plumbing ---------------------------------------------------------------------------

    Object addLocalPool(String queue, Runnable wake) {
        LocalPool pool = new LocalPool(queue, wake);
        localPools.add(pool);
        return pool;
    }

    void removeLocalPool(Object handle) {
        localPools.remove(handle);
    }

    DataSource dataSource() {
        return dataSource;
    }

    /**
     * A connection in auto-commit, whatever the pool's default: a claim, heartbeat or re-drive must be
     * durable on its own, and a claim left open would hold locks (on SQLite, the whole file) for good.
     * Statements that belong together set auto-commit off themselves and restore it.
     */
    Connection connection() throws SQLException {
        Connection c = dataSource.getConnection();
        try {
            if (!c.getAutoCommit()) {
                c.setAutoCommit(true);
            }
            return c;
        } catch (SQLException | RuntimeException e) {
            c.close();
            throw e;
        }
    }

    JobTables tables() {
        return tables;
    }

    Clock clock() {
        return clock;
    }

    private List<Job> query(String sql, Object... params) throws SQLException {
        List<Job> out = new ArrayList<>();
        try (Connection c = connection(); PreparedStatement ps = c.prepareStatement(sql)) {
            bind(ps, params);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    out.add(Rows.job(rs));
                }
            }
        }
        return out;
    }

    private int update(String sql, Object... params) throws SQLException {
        try (Connection c = connection(); PreparedStatement ps = c.prepareStatement(sql)) {
            bind(ps, params);
            return ps.executeUpdate();
        }
    }

    private static void bind(PreparedStatement ps, Object... params) throws SQLException {
        for (int i = 0; i < params.length; i++) {
            if (params[i] instanceof Long l) {
                ps.setLong(i + 1, l);
            } else {
                ps.setString(i + 1, String.valueOf(params[i]));
            }
        }
    }

    private static byte[] utf8(String s) {
        return s == null ? new byte[0] : s.getBytes(StandardCharsets.UTF_8);
    }

    static String checkName(String field, String value) {
        if (value == null || value.isBlank() || value.length() > 200) {
            throw new IllegalArgumentException(field + " must be 1 to 200 non-blank characters, got '" + value + "'");
        }
        return value;
    }

    @Override
    public String toString() {
        return "JobQueue{" + tables.jobs + " on " + tables.dialect() + "}";
    }

    /** Builds a {@link JobQueue}. Not thread-safe. */
    public static final class Builder {
        private final DataSource dataSource;
        private String tablePrefix = "stagger_";
        private Clock clock = Clock.system();

        private Builder(DataSource dataSource) {
            if (dataSource == null) {
                throw new IllegalArgumentException("dataSource must not be null");
            }
            this.dataSource = dataSource;
        }

        /**
         * Prefix of the table names ({@code <prefix>jobs}, {@code <prefix>job_errors}); default
         * {@code stagger_}. Lower-case letters, digits and underscores, starting with a letter.
         */
        public Builder tablePrefix(String tablePrefix) {
            if (tablePrefix == null || !PREFIX.matcher(tablePrefix).matches()) {
                throw new IllegalArgumentException("tablePrefix must match " + PREFIX + ", got '" + tablePrefix + "'");
            }
            this.tablePrefix = tablePrefix;
            return this;
        }

        /**
         * Where run-at times and timestamps come from (default the system clock). A
         * {@link dev.stagger.testing.VirtualClock} lets tests walk through retry schedules.
         * Workers on several machines compare these times, so keep machine clocks in sync.
         */
        public Builder clock(Clock clock) {
            if (clock == null) {
                throw new IllegalArgumentException("clock must not be null");
            }
            this.clock = clock;
            return this;
        }

        /**
         * Detects the database and creates or upgrades the tables.
         *
         * @throws IllegalArgumentException if the database is neither SQLite nor PostgreSQL
         */
        public JobQueue build() throws SQLException {
            Dialect dialect = Dialect.of(dataSource);
            if (dialect != Dialect.SQLITE && dialect != Dialect.POSTGRESQL) {
                throw new IllegalArgumentException("dataSource must be SQLite or PostgreSQL, got " + dialect);
            }
            JobTables tables = new JobTables(tablePrefix, dialect);
            tables.migrate(dataSource);
            return new JobQueue(dataSource, tables, clock);
        }
    }
}
