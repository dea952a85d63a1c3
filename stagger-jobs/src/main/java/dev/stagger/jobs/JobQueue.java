package dev.stagger.jobs;

import dev.stagger.Clock;
import dev.stagger.internal.Checks;
import dev.stagger.jdbc.Database;
import dev.stagger.jdbc.internal.Dialect;
import dev.stagger.jdbc.internal.SchemaMigrations;
import dev.stagger.jdbc.SchemaMode;
import dev.stagger.jdbc.SchemaNotReadyException;
import dev.stagger.jdbc.StoreException;
import dev.stagger.jdbc.StoreOptions;
import dev.stagger.jdbc.internal.StoreSetup;
import dev.stagger.jdbc.internal.Echo;
import dev.stagger.jobs.internal.Binder;
import dev.stagger.jobs.internal.JobTables;
import dev.stagger.jobs.internal.StoreFailures;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import javax.sql.DataSource;
import org.jspecify.annotations.Nullable;

/**
 * A durable job store in one database: enqueue jobs (on their own, in bulk, or inside the
 * caller's transaction). {@link WorkerPool}s built on it run the jobs; {@link #admin()} lists,
 * inspects, re-drives and purges them.
 *
 * <p>SQLite (one file, one machine) is the embedded default; PostgreSQL lets workers on several
 * machines share the queue. The schema is created or upgraded when the queue is built, or only
 * checked ({@link SchemaMode#VALIDATE}) for schemas applied from the SQL files this module ships
 * ({@code dev/stagger/jobs/sql/<database>/V<n>__stagger_jobs.sql}).
 *
 * <p>Failures of the database are thrown as the unchecked {@link StoreException}, the driver's
 * exception as its cause; no message carries a payload or another bound value. Thread-safe.
 */
public final class JobQueue {
    /** Most jobs one multi-row INSERT adds (PostgreSQL); a bulk enqueue of more runs several in its transaction. */
    private static final int MULTI_ROW_LIMIT = 5000;

    private final DataSource dataSource;
    private final JobTables tables;
    private final Clock clock;
    private final JobAdmin admin;
    /** Started pools of this queue object, woken at once by enqueues made through it. */
    private final List<LocalPool> localPools = new CopyOnWriteArrayList<>();

    private record LocalPool(String queue, Runnable wake) {
    }

    private JobQueue(DataSource dataSource, JobTables tables, Clock clock) {
        this.dataSource = dataSource;
        this.tables = tables;
        this.clock = clock;
        this.admin = new JobAdmin(this);
    }

    /** Starts building a queue over {@code dataSource} (SQLite or PostgreSQL). */
    public static Builder builder(DataSource dataSource) {
        return new Builder(dataSource);
    }

    /** The operator's view of this store: list, count, inspect, re-drive and purge jobs. */
    public JobAdmin admin() {
        return admin;
    }

    // ---- enqueue ----------------------------------------------------------------------------

    /** Adds a job with a UTF-8 text payload and default options; returns its id. */
    public long enqueue(String queue, String type, String payload) {
        return enqueue(queue, type, utf8(payload), EnqueueOptions.defaults());
    }

    /** Adds a job with a UTF-8 text payload; returns its id (the existing job's id for a duplicate key). */
    public long enqueue(String queue, String type, String payload, EnqueueOptions options) {
        return enqueue(queue, type, utf8(payload), options);
    }

    /** Adds a job; returns its id, or the existing job's id when its key is already stored. */
    public long enqueue(String queue, String type, byte[] payload, EnqueueOptions options) {
        return enqueueAll(List.of(new JobRequest(queue, type, payload, options))).get(0);
    }

    /**
     * Adds a job using the caller's connection without committing: the job exists only if the
     * caller's transaction commits (an order row and its "send receipt" job together, or neither).
     * On PostgreSQL idle workers are woken at commit.
     */
    public long enqueue(Connection connection, String queue, String type, byte[] payload, EnqueueOptions options) {
        Checks.notNull("connection", connection);
        return insertWrapped(connection, List.of(new JobRequest(queue, type, payload, options)), new LinkedHashSet<>())
                .get(0);
    }

    /** {@link #enqueue(Connection, String, String, byte[], EnqueueOptions)} with a UTF-8 text payload. */
    public long enqueue(Connection connection, String queue, String type, String payload, EnqueueOptions options) {
        return enqueue(connection, queue, type, utf8(payload), options);
    }

    /** Adds many jobs in one transaction: all or none. Returns their ids in order. */
    public List<Long> enqueueAll(List<JobRequest> jobs) {
        Checks.notNull("jobs", jobs);
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
        } catch (SQLException e) {
            throw StoreFailures.wrap("enqueue", tables.jobs, e, true);
        }
    }

    /** Adds many jobs with the caller's connection, without committing. */
    public List<Long> enqueueAll(Connection connection, List<JobRequest> jobs) {
        Checks.notNull("connection", connection);
        Checks.notNull("jobs", jobs);
        return insertWrapped(connection, jobs, new LinkedHashSet<>());
    }

    private List<Long> insertWrapped(Connection c, List<JobRequest> jobs, Set<String> wake) {
        try {
            return insert(c, jobs, wake);
        } catch (SQLException e) {
            throw StoreFailures.wrap("enqueue", tables.jobs, e, true);
        }
    }

    private List<Long> insert(Connection c, List<JobRequest> jobs, Set<String> wake) throws SQLException {
        List<Long> ids = new ArrayList<>(jobs.size());
        long now = clock.currentTimeMillis();
        boolean multiRow = tables.dialect() == Dialect.POSTGRESQL;
        try (PreparedStatement plain = c.prepareStatement(tables.insert(false));
             PreparedStatement keyed = c.prepareStatement(tables.insert(true))) {
            Binder plainBinder = new Binder(plain, tables, clock);
            Binder keyedBinder = new Binder(keyed, tables, clock);
            List<JobRequest> pending = new ArrayList<>();
            for (JobRequest job : jobs) {
                Checks.notNull("job", job);
                EnqueueOptions o = job.options();
                Long runAt = o.runAtMillis();
                if (runAt == null ? o.delayMillis() == 0 : runAt <= now) {
                    wake.add(job.queue());
                }
                if (o.storedKey() == null && multiRow) {
                    pending.add(job);
                    if (pending.size() == MULTI_ROW_LIMIT) {
                        insertRows(c, pending, ids);
                    }
                    continue;
                }
                insertRows(c, pending, ids); // keep the ids in request order
                PreparedStatement ps = o.storedKey() == null ? plain : keyed;
                bindInsert((o.storedKey() == null ? plainBinder : keyedBinder).reset(), job);
                Long id = null;
                try (ResultSet rs = ps.executeQuery()) {
                    if (rs.next()) {
                        id = rs.getLong(1);
                    }
                }
                ids.add(id != null ? id : existingId(c, o.storedKey()));
            }
            insertRows(c, pending, ids);
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

    /**
     * PostgreSQL: inserts {@code rows} (jobs without a key) in one statement, one array per column,
     * adds their ids to {@code ids} in request order, and empties {@code rows}. The ids come from
     * the table's sequence in the order the rows are inserted, which is request order, so sorted
     * they line up with the requests.
     */
    private void insertRows(Connection c, List<JobRequest> rows, List<Long> ids) throws SQLException {
        if (rows.isEmpty()) {
            return;
        }
        int n = rows.size();
        String[] queues = new String[n];
        String[] types = new String[n];
        byte[][] payloads = new byte[n][];
        Integer[] priorities = new Integer[n];
        Integer[] maxAttempts = new Integer[n];
        Long[] runAts = new Long[n];
        Long[] delays = new Long[n];
        for (int i = 0; i < n; i++) {
            JobRequest job = rows.get(i);
            EnqueueOptions o = job.options();
            queues[i] = job.queue();
            types[i] = job.type();
            payloads[i] = job.payloadUnsafe();
            priorities[i] = o.priority();
            maxAttempts[i] = o.maxAttempts();
            runAts[i] = o.runAtMillis();
            delays[i] = o.delayMillis();
        }
        List<Long> inserted = new ArrayList<>(n);
        try (PreparedStatement ps = c.prepareStatement(tables.insertRows())) {
            new Binder(ps, tables, clock).now().now().array(c.createArrayOf("varchar", queues))
                    .array(c.createArrayOf("varchar", types)).array(c.createArrayOf("bytea", payloads))
                    .array(c.createArrayOf("integer", priorities)).array(c.createArrayOf("integer", maxAttempts))
                    .array(c.createArrayOf("bigint", runAts)).array(c.createArrayOf("bigint", delays));
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    inserted.add(rs.getLong(1));
                }
            }
        }
        if (inserted.size() != n) {
            throw new SQLException("expected " + n + " generated job ids, got " + inserted.size());
        }
        inserted.sort(null);
        ids.addAll(inserted);
        rows.clear();
    }

    private static void bindInsert(Binder b, JobRequest job) throws SQLException {
        EnqueueOptions o = job.options();
        b.text(job.queue()).text(job.type()).bytes(job.payloadUnsafe()).text(o.storedKey()).integer(o.priority())
                .integer(o.maxAttempts()).nullableBigint(o.runAtMillis()).now().bigint(o.delayMillis()).now();
    }

    private long existingId(Connection c, @Nullable String key) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(tables.idByKey())) {
            ps.setString(1, key);
            try (ResultSet rs = ps.executeQuery()) {
                if (!rs.next()) {
                    throw new SQLException("a job key conflicted but no job holds it (purged meanwhile?)");
                }
                return rs.getLong(1);
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

    /** True when leases and run-at times are compared with the database server's clock (see {@link Builder#databaseClock}). */
    public boolean usesDatabaseClock() {
        return tables.databaseClock();
    }

    private static byte[] utf8(String s) {
        return s == null ? new byte[0] : s.getBytes(StandardCharsets.UTF_8);
    }

    @Override
    public String toString() {
        return "JobQueue{" + tables.jobs + " on " + tables.dialect() + "}";
    }

    /**
     * Builds a {@link JobQueue}. The store options ({@link StoreOptions}: table prefix, clock,
     * database clock, schema mode) are set one by one here or all at once with
     * {@link #storeOptions}. Not thread-safe.
     */
    public static final class Builder {
        private final DataSource dataSource;
        private StoreOptions.Builder storeOptions = StoreOptions.builder();

        private Builder(DataSource dataSource) {
            this.dataSource = Checks.notNull("dataSource", dataSource);
        }

        /**
         * All store options at once, replacing any set before. The queue's tables live in the
         * connection's current schema, so options with a {@linkplain StoreOptions#schema schema}
         * are refused.
         */
        public Builder storeOptions(StoreOptions options) {
            Checks.notNull("storeOptions", options);
            if (options.schema().isPresent()) {
                throw new IllegalArgumentException("schema is not supported by the job queue, got "
                        + Echo.of(options.schema().get()));
            }
            this.storeOptions = options.toBuilder();
            return this;
        }

        /**
         * Prefix of every table the store writes ({@code <prefix>jobs}, {@code <prefix>job_errors},
         * {@code <prefix>schema_version}); default {@code stagger_}. See
         * {@link StoreOptions.Builder#tablePrefix(String)}.
         */
        public Builder tablePrefix(String tablePrefix) {
            storeOptions.tablePrefix(tablePrefix);
            return this;
        }

        /**
         * What the store's pools time their work with (polls, heartbeats, rescue, reconnects,
         * shutdown), and where stored times come from when the database's clock is not used
         * (see {@link #databaseClock}); default the system clock. A
         * {@link dev.stagger.testing.VirtualClock} lets tests walk through schedules.
         */
        public Builder clock(Clock clock) {
            storeOptions.clock(clock);
            return this;
        }

        /**
         * Whether leases, run-at times and rescue are computed and compared in SQL with the
         * database server's clock (true) or with the store's {@link #clock} (false). Default: true
         * on PostgreSQL, where workers on several machines share the queue and their clocks may
         * disagree (a worker whose clock runs ahead would otherwise rescue live jobs early, and one
         * running behind late); false on SQLite, one file on one machine whose clock every worker
         * shares.
         */
        public Builder databaseClock(boolean databaseClock) {
            storeOptions.databaseClock(databaseClock);
            return this;
        }

        /**
         * {@link SchemaMode#MIGRATE} (default) creates or upgrades the tables at {@link #build()};
         * {@link SchemaMode#VALIDATE} changes nothing and fails naming what is missing, for
         * schemas applied from the shipped SQL files, and for tools that must not create tables
         * in a database that is not a job store.
         */
        public Builder schemaMode(SchemaMode schemaMode) {
            storeOptions.schemaMode(schemaMode);
            return this;
        }

        /**
         * The SQL that creates (version by version) the queue's tables for this prefix on
         * {@code database}, without touching any database: for a migration tool, when the prefix
         * differs from the shipped files' {@code stagger_}. A queue built with
         * {@link SchemaMode#VALIDATE} accepts a database it was applied to.
         */
        public String schemaScript(Database database) {
            return schemaMigrations().script(Dialect.of(Checks.notNull("database", database)));
        }

        /** The queue's schema definition for this prefix. */
        SchemaMigrations schemaMigrations() {
            return JobTables.schema(storeOptions.build());
        }

        /**
         * Detects the database and creates, upgrades or checks the tables.
         *
         * @throws IllegalArgumentException if the database is neither SQLite nor PostgreSQL
         * @throws SchemaNotReadyException in {@link SchemaMode#VALIDATE} when the tables or their
         *     recorded version are missing; the message names the database and the tables
         * @throws StoreException when the database cannot be reached
         */
        public JobQueue build() {
            StoreOptions options = storeOptions.build();
            try {
                Dialect dialect = StoreSetup.dialect(dataSource, options);
                schemaMigrations().prepare(dataSource, options.schemaMode());
                return new JobQueue(dataSource,
                        new JobTables(options.tablePrefix(), dialect, StoreSetup.databaseClock(options, dialect)),
                        options.clock());
            } catch (SQLException e) {
                throw StoreFailures.wrap("preparing the schema", options.tablePrefix() + "jobs", e, false);
            }
        }
    }
}
