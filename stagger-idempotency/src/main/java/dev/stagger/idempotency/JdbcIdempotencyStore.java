package dev.stagger.idempotency;

import dev.stagger.internal.Checks;
import dev.stagger.jdbc.StoreException;
import dev.stagger.Clock;
import dev.stagger.idempotency.internal.ClaimRules;
import dev.stagger.jdbc.internal.ConnectionPool;
import dev.stagger.idempotency.internal.HeaderCodec;
import dev.stagger.idempotency.internal.SafeListener;
import dev.stagger.jdbc.Database;
import dev.stagger.jdbc.StoreOptions;
import dev.stagger.jdbc.internal.StoreSetup;
import dev.stagger.jdbc.internal.Dialect;
import dev.stagger.jdbc.internal.SchemaMigrations;
import dev.stagger.jdbc.SchemaMode;
import dev.stagger.jdbc.SchemaNotReadyException;
import dev.stagger.jdbc.SqliteDataSource;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;
import javax.sql.DataSource;
import org.jspecify.annotations.Nullable;

/**
 * A store in one SQL table, on SQLite (the embedded default: one file) or PostgreSQL (any number
 * of server instances sharing one database).
 *
 * <p>The claim is race-free without locks or transactions: an {@code INSERT ... ON CONFLICT DO
 * NOTHING} decides the first request (the primary key is the scope id), and a takeover after a
 * lost lease is a compare-and-set {@code UPDATE} on the previous lease token. Every statement runs
 * in auto-commit (also on connections a pool hands out with auto-commit off), so no transaction is
 * held while the request executes.
 *
 * <p><b>Whose clock.</b> Leases and expiries are epoch milliseconds. On PostgreSQL they are
 * computed and compared in SQL with the database server's clock ({@code statement_timestamp()}),
 * so servers sharing the database agree on when a lease passes even when their own clocks
 * disagree: a server whose clock runs a minute ahead takes nothing over early. On SQLite the
 * database is a file on one machine, whose clock is the only one: times come from the store's
 * {@link Clock} (the system clock unless a test injects another). {@link Builder#databaseClock}
 * overrides either default.
 *
 * <p>The table is created (and later migrated) through {@link SchemaMigrations} when the store is
 * built, or only checked ({@link SchemaMode#VALIDATE}) for schemas applied from the SQL files
 * this module ships ({@code dev/stagger/idempotency/sql/<database>/V<n>__stagger_idempotency.sql}).
 * Thread-safe; borrows one connection per call, so give it a pooled {@link DataSource} under load.
 */
public final class JdbcIdempotencyStore implements IdempotencyStore, AutoCloseable {
    /** The default table prefix: the table is then {@value #DEFAULT_TABLE}. */
    public static final String DEFAULT_TABLE_PREFIX = StoreOptions.DEFAULT_TABLE_PREFIX;
    /** The default table name. */
    public static final String DEFAULT_TABLE = DEFAULT_TABLE_PREFIX + "idempotency";

    private static final int MAX_CLAIM_ROUNDS = 16;
    private static final int SQLITE_CONNECTIONS = 4;
    /** Marks where "now" goes in a statement's parameters: bound from the clock, or nothing when the database reads its own. */
    private static final Object NOW = new Object();

    private final DataSource dataSource;
    private final String table;
    private final Clock clock;
    private final Dialect dialect;
    private final boolean databaseClock;
    private final IdempotencyListener listener;
    private final @Nullable ConnectionPool ownPool;
    private final String insertClaim;
    private final @Nullable String insertClaimUnflushed;
    private final String selectRow;
    private final String takeOver;
    private final String deleteExpired;
    private final String complete;
    private final String purge;
    private final long purgeIntervalNanos;
    private final int purgeBatchSize;
    private final AtomicReference<Clock.Cancellable> nextPurge = new AtomicReference<>();
    private volatile boolean closed;

    private JdbcIdempotencyStore(Builder b, StoreOptions options, Dialect dialect, boolean databaseClock) {
        this.ownPool = b.ownPool;
        this.dataSource = b.dataSource;
        this.table = options.qualifiedTable("idempotency");
        this.clock = options.clock();
        this.dialect = dialect;
        this.databaseClock = databaseClock;
        this.listener = new SafeListener(b.listener);
        this.purgeIntervalNanos = b.purgeInterval == null ? 0 : b.purgeInterval.toNanos();
        this.purgeBatchSize = b.purgeBatchSize;
        String now = databaseClock ? dialect.epochMillisNow() : "?";
        this.insertClaim = dialect.insertIfAbsent(table,
                List.of("scope_id", "fingerprint", "state", "lease_token", "lease_until", "expires_at", "created_at"),
                List.of("?", "?", "'IN_FLIGHT'", "?", now + " + ?", now + " + ?", now),
                List.of("scope_id")) + " RETURNING lease_until";
        // the same insert, in a transaction whose commit does not wait for the WAL flush (PostgreSQL's
        // synchronous_commit, set for this statement's transaction only)
        this.insertClaimUnflushed = dialect != Dialect.POSTGRESQL ? null : "INSERT INTO " + table
                + " (scope_id, fingerprint, state, lease_token, lease_until, expires_at, created_at) SELECT ?, ?,"
                + " 'IN_FLIGHT', ?, " + now + " + ?, " + now + " + ?, " + now
                + " FROM (SELECT set_config('synchronous_commit', 'off', true)) unflushed"
                + " ON CONFLICT (scope_id) DO NOTHING RETURNING lease_until";
        this.selectRow = "SELECT fingerprint, state, lease_token, lease_until, expires_at, status, headers, body, "
                + now + " FROM " + table + " WHERE scope_id = ?";
        this.takeOver = "UPDATE " + table + " SET lease_token = ?, lease_until = " + now + " + ?, expires_at = " + now
                + " + ? WHERE scope_id = ? AND state = 'IN_FLIGHT' AND lease_token = ? AND lease_until <= " + now
                + " RETURNING lease_until";
        this.deleteExpired = "DELETE FROM " + table + " WHERE scope_id = ? AND expires_at <= " + now;
        this.complete = "UPDATE " + table + " SET state = 'COMPLETED', lease_token = NULL, status = ?, headers = ?,"
                + " body = ?, expires_at = " + now + " + ? WHERE scope_id = ? AND state = 'IN_FLIGHT' AND lease_token = ?";
        this.purge = "DELETE FROM " + table + " WHERE scope_id IN (SELECT scope_id FROM " + table
                + " WHERE expires_at <= " + now + " LIMIT ?)";
    }

    /** A store in the SQLite file {@code file} (created with its directories when missing). */
    public static JdbcIdempotencyStore sqlite(Path file) {
        return builder(SqliteDataSource.file(file)).build();
    }

    /**
     * A store over {@code dataSource}. A {@link SqliteDataSource} (one new connection per call) is
     * given a few reused connections of the store's own, closed by {@link #close()}: reopening
     * SQLite costs pragmas and, when the last connection closes, a WAL checkpoint with an fsync,
     * which otherwise dominated each request.
     */
    public static Builder builder(DataSource dataSource) {
        if (dataSource == null) {
            throw new NullPointerException("dataSource must not be null");
        }
        return new Builder(dataSource);
    }

    /**
     * Configures a {@link JdbcIdempotencyStore}. The store options ({@link StoreOptions}: table
     * prefix, schema, clock, database clock, schema mode) are set one by one here or all at once
     * with {@link #storeOptions}. Not thread-safe.
     */
    public static final class Builder {
        private final DataSource dataSource;
        private final @Nullable ConnectionPool ownPool;
        private StoreOptions.Builder storeOptions = StoreOptions.builder();
        private @Nullable Duration purgeInterval;
        private int purgeBatchSize = 1000;
        private IdempotencyListener listener = IdempotencyListener.none();

        private Builder(DataSource dataSource) {
            this.ownPool = dataSource instanceof SqliteDataSource ? new ConnectionPool(dataSource, SQLITE_CONNECTIONS) : null;
            this.dataSource = ownPool != null ? ownPool : dataSource;
        }

        /** All store options at once, replacing any set before. */
        public Builder storeOptions(StoreOptions options) {
            if (options == null) {
                throw new NullPointerException("storeOptions must not be null");
            }
            this.storeOptions = options.toBuilder();
            return this;
        }

        /**
         * Prefix of every table the store writes: {@code <prefix>idempotency} and the schema
         * version table {@code <prefix>schema_version}; default {@value #DEFAULT_TABLE_PREFIX}.
         * See {@link StoreOptions.Builder#tablePrefix(String)}.
         */
        public Builder tablePrefix(String tablePrefix) {
            storeOptions.tablePrefix(tablePrefix);
            return this;
        }

        /**
         * The PostgreSQL schema holding the tables (created when missing, unless the schema mode is
         * {@link SchemaMode#VALIDATE}); by default the connection's current schema. See
         * {@link StoreOptions.Builder#schema(String)}. Refused at {@link #build()} on SQLite.
         */
        public Builder schema(String schema) {
            storeOptions.schema(schema);
            return this;
        }

        /**
         * Where the store reads the time when it does not use the database's clock (see
         * {@link #databaseClock}), and what runs the {@linkplain #purgeInterval purge schedule};
         * default {@link Clock#system()}.
         */
        public Builder clock(Clock clock) {
            storeOptions.clock(clock);
            return this;
        }

        /**
         * Whether leases and expiries are computed and compared with the database server's clock
         * (true) or the store's {@link #clock} (false). Default: true on PostgreSQL, where several
         * servers whose clocks may disagree share the table; false on SQLite, one file on one
         * machine, whose clock is the only one.
         */
        public Builder databaseClock(boolean databaseClock) {
            storeOptions.databaseClock(databaseClock);
            return this;
        }

        /**
         * {@link SchemaMode#MIGRATE} (default) creates or upgrades the table at {@link #build()};
         * {@link SchemaMode#VALIDATE} changes nothing and fails naming what is missing, for
         * schemas applied from the shipped SQL files.
         */
        public Builder schemaMode(SchemaMode schemaMode) {
            storeOptions.schemaMode(schemaMode);
            return this;
        }

        /**
         * Purge expired records every {@code interval}, on the {@link #clock}'s scheduler, in
         * batches of {@link #purgeBatchSize} until none are left, until {@link #close()}. Off by
         * default (call {@link IdempotencyStore#purgeAllExpired} yourself). Outcomes go to the
         * {@link #idempotencyListener}.
         */
        public Builder purgeInterval(Duration interval) {
            Checks.positive("purgeInterval", interval);
            if (interval.compareTo(Duration.ofDays(366)) > 0) {
                throw new IllegalArgumentException("purgeInterval must be at most a year, got " + interval);
            }
            this.purgeInterval = interval;
            return this;
        }

        /** Records deleted per statement by the scheduled purge; default 1000. */
        public Builder purgeBatchSize(int batchSize) {
            if (batchSize < 1) {
                throw new IllegalArgumentException("purgeBatchSize must be at least 1, got " + batchSize);
            }
            this.purgeBatchSize = batchSize;
            return this;
        }

        /** Hears the scheduled purges. Default {@link IdempotencyListener#none()}. */
        public Builder idempotencyListener(IdempotencyListener listener) {
            if (listener == null) {
                throw new NullPointerException("idempotencyListener must not be null");
            }
            this.listener = listener;
            return this;
        }

        /**
         * The SQL that creates (version by version) the store's tables as configured here (prefix,
         * schema) on {@code database}, without touching any database: for a migration tool, when
         * the prefix or schema differs from the shipped files' defaults. A store built with
         * {@link SchemaMode#VALIDATE} accepts a database it was applied to.
         */
        public String schemaScript(Database database) {
            if (database == null) {
                throw new NullPointerException("database must not be null");
            }
            return schemaMigrations().script(Dialect.of(database));
        }

        /** The store's schema definition as configured here. */
        SchemaMigrations schemaMigrations() {
            return schemaMigrations(storeOptions.build());
        }

        private static SchemaMigrations schemaMigrations(StoreOptions options) {
            String name = options.tablePrefix() + "idempotency";
            return SchemaMigrations.builder("idempotency:" + name).storeOptions(options).table(name)
                    .steps(migrations(options.qualifiedTable("idempotency"), name)).build();
        }

        /**
         * Creates or migrates the table (or checks it, in {@link SchemaMode#VALIDATE}), starts the
         * purge schedule if one is set, and returns the store.
         *
         * @throws IllegalArgumentException when the database is neither SQLite nor PostgreSQL, or
         *     a schema is set on SQLite
         * @throws SchemaNotReadyException in {@link SchemaMode#VALIDATE} when the table or its
         *     recorded version is missing
         * @throws StoreException when the database cannot be reached
         */
        public JdbcIdempotencyStore build() {
            StoreOptions options = storeOptions.build();
            try {
                Dialect dialect = StoreSetup.dialect(dataSource, options);
                schemaMigrations(options).prepare(dataSource, options.schemaMode());
                JdbcIdempotencyStore store = new JdbcIdempotencyStore(this, options, dialect,
                        StoreSetup.databaseClock(options, dialect));
                store.schedulePurge();
                return store;
            } catch (SQLException e) {
                throw new StoreException("cannot prepare table " + options.qualifiedTable("idempotency"), e);
            }
        }
    }

    /** Version 1: the table and its expiry index (an index name takes no schema: it lives with its table). */
    private static List<Function<Dialect, List<String>>> migrations(String table, String name) {
        return List.of(dialect -> List.of(
                "CREATE TABLE " + table + " ("
                        + "scope_id VARCHAR(64) PRIMARY KEY, "
                        + "fingerprint VARCHAR(64) NOT NULL, "
                        + "state VARCHAR(16) NOT NULL, "
                        + "lease_token VARCHAR(36), "
                        + "lease_until BIGINT NOT NULL, "
                        + "expires_at BIGINT NOT NULL, "
                        + "created_at BIGINT NOT NULL, "
                        + "status INTEGER, "
                        + "headers TEXT, "
                        + "body " + (dialect == Dialect.POSTGRESQL ? "BYTEA" : "BLOB") + ")",
                "CREATE INDEX " + name + "_expires ON " + table + " (expires_at)"));
    }

    /** The table this store uses, schema-qualified where a schema is set. */
    public String tableName() {
        return table;
    }

    Dialect dialect() {
        return dialect;
    }

    /** True when leases and expiries use the database server's clock (see {@link Builder#databaseClock}). */
    public boolean usesDatabaseClock() {
        return databaseClock;
    }

    @Override
    public Claim claim(IdempotencyScope scope, RequestFingerprint fingerprint, Duration lease, Duration expiry) {
        return claim(scope, fingerprint, lease, expiry, insertClaim);
    }

    /**
     * Claims {@code scope} as {@link #claim} does, for a request whose response will be stored with
     * {@link #complete(Connection, IdempotencyScope, String, StoredResponse, Duration)} in a
     * transaction on this database: a new claim's commit does not wait for its write-ahead log
     * to reach the disk (one disk flush fewer per request). That loses nothing: the completion's
     * commit waits for its flush, which carries every earlier commit with it, and a database crash
     * before it loses the request's transaction too, so the retry is then the only execution.
     * Not for requests stored with the auto-commit {@link #complete}, where a claim lost in a
     * database crash could let a retry run beside the first execution. PostgreSQL only
     * ({@link #completesInTransactions()}).
     *
     * @throws IllegalStateException on SQLite
     */
    public Claim claimForTransaction(IdempotencyScope scope, RequestFingerprint fingerprint, Duration lease,
                                     Duration expiry) {
        if (!completesInTransactions()) {
            throw new IllegalStateException("claimForTransaction needs PostgreSQL, got " + dialect);
        }
        // made for PostgreSQL, the one dialect that completes in transactions
        return claim(scope, fingerprint, lease, expiry, Objects.requireNonNull(insertClaimUnflushed, "insertClaimUnflushed"));
    }

    private Claim claim(IdempotencyScope scope, RequestFingerprint fingerprint, Duration lease, Duration expiry,
                        String insert) {
        long leaseMillis = Checks.millis("lease", lease);
        long expiryMillis = Checks.millis("expiry", expiry);
        String id = scope.id();
        try (Connection c = connection()) {
            for (int round = 0; round < MAX_CLAIM_ROUNDS; round++) {
                String token = UUID.randomUUID().toString();
                Optional<Instant> inserted = leaseUntil(c, insert,
                        id, fingerprint.hex(), token, NOW, leaseMillis, NOW, expiryMillis, NOW);
                if (inserted.isPresent()) {
                    return new Claim.Acquired(token, inserted.get(), false);
                }
                Optional<Row> existing = select(c, id);
                if (existing.isEmpty()) {
                    continue; // released between our insert and select: try again
                }
                Row row = existing.get();
                switch (ClaimRules.decide(row.completed, row.fingerprint, fingerprint.hex(), row.leaseUntil,
                        row.expiresAt, row.now)) {
                    case MISMATCH:
                        return new Claim.Mismatch();
                    case REPLAY:
                        return new Claim.Replay(row.response());
                    case IN_FLIGHT:
                        return new Claim.InFlight(Instant.ofEpochMilli(row.leaseUntil));
                    case REPLACE_EXPIRED:
                        update(c, deleteExpired, id, NOW);
                        break;
                    case TAKE_OVER:
                        Optional<Instant> taken = leaseUntil(c, takeOver,
                                token, NOW, leaseMillis, NOW, expiryMillis, id, row.token, NOW);
                        if (taken.isPresent()) {
                            return new Claim.Acquired(token, taken.get(), true);
                        }
                        break;
                    default:
                        throw new IllegalStateException("unknown claim rule");
                }
            }
            throw new StoreException("no stable answer for a claim after " + MAX_CLAIM_ROUNDS
                    + " rounds of concurrent changes", null);
        } catch (SQLException e) {
            throw new StoreException("claim failed on table " + table, e);
        }
    }

    @Override
    public boolean complete(IdempotencyScope scope, String leaseToken, StoredResponse response, Duration expiry) {
        long expiryMillis = Checks.millis("expiry", expiry);
        try (Connection c = connection()) {
            return update(c, complete, response.status(), HeaderCodec.encode(response.headers()), response.body(),
                    NOW, expiryMillis, scope.id(), leaseToken) == 1;
        } catch (SQLException e) {
            throw new StoreException("complete failed on table " + table, e);
        }
    }

    /**
     * Stores the response and marks the record COMPLETED, like {@link #complete(IdempotencyScope,
     * String, StoredResponse, Duration)}, but as one statement of the caller's transaction on
     * {@code connection} (a connection to this store's database, not in auto-commit): nothing is
     * committed here, so the completion commits or rolls back with whatever else the transaction
     * wrote. Supported on PostgreSQL ({@link #completesInTransactions()}).
     *
     * <p>A takeover of the lease waits for that transaction to end (the update holds the row's
     * lock) and then finds the record completed; a completion that finds the lease already taken
     * over returns false, and the caller must roll its transaction back.
     *
     * @return false when the lease was lost; nothing is written then
     * @throws IllegalStateException on SQLite, or when {@code connection} is in auto-commit
     */
    public boolean complete(Connection connection, IdempotencyScope scope, String leaseToken, StoredResponse response,
                            Duration expiry) {
        if (connection == null) {
            throw new NullPointerException("connection must not be null");
        }
        long expiryMillis = Checks.millis("expiry", expiry);
        if (!completesInTransactions()) {
            throw new IllegalStateException("completing in the caller's transaction needs PostgreSQL, got " + dialect);
        }
        try {
            if (connection.getAutoCommit()) {
                throw new IllegalStateException("complete(connection, ..) needs a connection in a transaction,"
                        + " got one in auto-commit");
            }
            return update(connection, complete, response.status(), HeaderCodec.encode(response.headers()),
                    response.body(), NOW, expiryMillis, scope.id(), leaseToken) == 1;
        } catch (SQLException e) {
            throw new StoreException("complete failed on table " + table, e);
        }
    }

    /**
     * True when {@link #complete(Connection, IdempotencyScope, String, StoredResponse, Duration)}
     * is supported: on PostgreSQL. (SQLite lets one transaction write at a time, so a transaction
     * held for a whole request would stop every other request's claim.)
     */
    public boolean completesInTransactions() {
        return dialect == Dialect.POSTGRESQL;
    }

    @Override
    public boolean release(IdempotencyScope scope, String leaseToken) {
        try (Connection c = connection()) {
            return update(c, "DELETE FROM " + table + " WHERE scope_id = ? AND state = 'IN_FLIGHT' AND lease_token = ?",
                    scope.id(), leaseToken) == 1;
        } catch (SQLException e) {
            throw new StoreException("release failed on table " + table, e);
        }
    }

    @Override
    public Optional<IdempotencyRecord> find(IdempotencyScope scope) {
        String id = scope.id();
        try (Connection c = connection()) {
            return select(c, id).map(row -> new IdempotencyRecord(id, RequestFingerprint.fromHex(row.fingerprint),
                    row.completed ? IdempotencyRecord.State.COMPLETED : IdempotencyRecord.State.IN_FLIGHT,
                    Instant.ofEpochMilli(row.leaseUntil), Instant.ofEpochMilli(row.expiresAt),
                    row.completed ? Optional.of(row.response()) : Optional.empty()));
        } catch (SQLException e) {
            throw new StoreException("find failed on table " + table, e);
        }
    }

    @Override
    public int purgeExpired(int batchSize) {
        if (batchSize < 1) {
            throw new IllegalArgumentException("batchSize must be at least 1, got " + batchSize);
        }
        try (Connection c = connection()) {
            return update(c, purge, NOW, batchSize);
        } catch (SQLException e) {
            throw new StoreException("purge failed on table " + table, e);
        }
    }

    /** Number of rows in the table, expired or not (for operators and tests). */
    public long count() {
        try (Connection c = connection();
             PreparedStatement ps = c.prepareStatement("SELECT COUNT(*) FROM " + table);
             ResultSet rs = ps.executeQuery()) {
            rs.next();
            return rs.getLong(1);
        } catch (SQLException e) {
            throw new StoreException("count failed on table " + table, e);
        }
    }

    private void schedulePurge() {
        if (purgeIntervalNanos > 0 && !closed) {
            Clock.Cancellable next = clock.schedule(this::purgeOnSchedule, purgeIntervalNanos);
            nextPurge.set(next);
            if (closed) {
                next.cancel();
            }
        }
    }

    private void purgeOnSchedule() {
        if (closed) {
            return;
        }
        try {
            long removed = purgeAllExpired(purgeBatchSize);
            listener.purged(removed);
        } catch (RuntimeException e) {
            if (!closed) {
                listener.purgeFailed(e);
            }
        }
        schedulePurge();
    }

    /**
     * A connection in auto-commit, whatever the pool's default: each statement here must be durable on its
     * own (a claim left uncommitted would be rolled back when the connection goes back, and the next repeat
     * would run the request again). Pools restore their default when the connection is returned.
     */
    private Connection connection() throws SQLException {
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

    /** Binds {@code values} in order; {@link #NOW} is the store clock's time, or nothing where the database reads its own. */
    private void bind(PreparedStatement ps, Object... values) throws SQLException {
        int i = 1;
        long now = Long.MIN_VALUE;
        for (Object v : values) {
            if (v == NOW) {
                if (!databaseClock) {
                    if (now == Long.MIN_VALUE) {
                        now = clock.currentTimeMillis();
                    }
                    ps.setLong(i++, now);
                }
            } else if (v instanceof String s) {
                ps.setString(i++, s);
            } else if (v instanceof Long l) {
                ps.setLong(i++, l);
            } else if (v instanceof Integer n) {
                ps.setInt(i++, n);
            } else if (v instanceof byte[] bytes) {
                ps.setBytes(i++, bytes);
            } else {
                throw new IllegalArgumentException("cannot bind a " + (v == null ? "null" : v.getClass().getName()));
            }
        }
    }

    private int update(Connection c, String sql, Object... values) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(sql)) {
            bind(ps, values);
            return ps.executeUpdate();
        }
    }

    /** Runs a statement {@code RETURNING lease_until}: the new lease when it changed a row. */
    private Optional<Instant> leaseUntil(Connection c, String sql, Object... values) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(sql)) {
            bind(ps, values);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() ? Optional.of(Instant.ofEpochMilli(rs.getLong(1))) : Optional.empty();
            }
        }
    }

    private Optional<Row> select(Connection c, String id) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(selectRow)) {
            bind(ps, NOW, id);
            try (ResultSet rs = ps.executeQuery()) {
                if (!rs.next()) {
                    return Optional.empty();
                }
                boolean completed = "COMPLETED".equals(rs.getString(2));
                return Optional.of(new Row(rs.getString(1), completed, rs.getString(3), rs.getLong(4), rs.getLong(5),
                        rs.getInt(6), rs.getString(7), completed ? rs.getBytes(8) : null, rs.getLong(9)));
            }
        }
    }

    /** A stored row and the time it was read at ({@code now}, by the clock the store compares with). */
    private record Row(String fingerprint, boolean completed, String token, long leaseUntil, long expiresAt,
                       int status, String headers, byte @Nullable [] body, long now) {
        StoredResponse response() {
            return StoredResponse.of(status, HeaderCodec.decode(headers), body == null ? new byte[0] : body);
        }
    }

    /**
     * Stops the purge schedule and closes the SQLite connections this store keeps; any other data
     * source belongs to the caller and is left alone.
     */
    @Override
    public void close() {
        closed = true;
        Clock.Cancellable purge = nextPurge.get();
        if (purge != null) {
            purge.cancel();
        }
        if (ownPool != null) {
            try {
                ownPool.close();
            } catch (SQLException e) {
                throw new StoreException("closing the SQLite connections failed", e);
            }
        }
    }

    @Override
    public String toString() {
        return "JdbcIdempotencyStore{" + dialect + ", table=" + table + (databaseClock ? ", database clock" : "") + "}";
    }
}
