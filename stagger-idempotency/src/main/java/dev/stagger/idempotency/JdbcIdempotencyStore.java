package dev.stagger.idempotency;

import dev.stagger.Clock;
import dev.stagger.idempotency.internal.ClaimRules;
import dev.stagger.idempotency.internal.ConnectionPool;
import dev.stagger.idempotency.internal.Durations;
import dev.stagger.idempotency.internal.HeaderCodec;
import dev.stagger.jdbc.Dialect;
import dev.stagger.jdbc.SchemaMigrations;
import dev.stagger.jdbc.SqliteDataSource;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.function.Function;
import java.util.regex.Pattern;
import javax.sql.DataSource;

/**
 * A store in one SQL table, on SQLite (the embedded default: one file) or PostgreSQL (any number
 * of server instances sharing one database).
 *
 * <p>The claim is race-free without locks or transactions: an {@code INSERT ... ON CONFLICT DO
 * NOTHING} decides the first request (the primary key is the scope id), and a takeover after a
 * lost lease is a compare-and-set {@code UPDATE} on the previous lease token. Every statement runs
 * in auto-commit (also on connections a pool hands out with auto-commit off), so no transaction is
 * held while the request executes. Times are wall-clock milliseconds from the store's
 * {@link Clock}; servers sharing a database need roughly synchronised
 * clocks (leases are tens of seconds, so NTP is plenty).
 *
 * <p>The table is created (and later migrated) through {@link SchemaMigrations} when the store is
 * built. Thread-safe; borrows one connection per call, so give it a pooled {@link DataSource}
 * under load.
 */
public final class JdbcIdempotencyStore implements IdempotencyStore, AutoCloseable {
    /** The default table name. */
    public static final String DEFAULT_TABLE = "stagger_idempotency";

    private static final Pattern TABLE_NAME = Pattern.compile("[A-Za-z_][A-Za-z0-9_]{0,62}");
    private static final int MAX_CLAIM_ROUNDS = 16;
    private static final int SQLITE_CONNECTIONS = 4;

    private final DataSource dataSource;
    private final String table;
    private final Clock clock;
    private final Dialect dialect;
    /** The claim: insert-if-absent on the scope id, so the first of concurrent claims wins. */
    private final String insertClaim;
    private final ConnectionPool ownPool;

    private JdbcIdempotencyStore(Builder b, Dialect dialect) {
        this.ownPool = b.ownPool;
        this.dataSource = b.dataSource;
        this.table = b.table;
        this.clock = b.clock;
        this.dialect = dialect;
        this.insertClaim = dialect.insertIfAbsent(table,
                List.of("scope_id", "fingerprint", "state", "lease_token", "lease_until", "expires_at", "created_at"),
                List.of("scope_id"));
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
            throw new IllegalArgumentException("dataSource must not be null");
        }
        return new Builder(dataSource);
    }

    /** Configures a {@link JdbcIdempotencyStore}. Not thread-safe. */
    public static final class Builder {
        private final DataSource dataSource;
        private final ConnectionPool ownPool;
        private String table = DEFAULT_TABLE;
        private Clock clock = Clock.system();

        private Builder(DataSource dataSource) {
            this.ownPool = dataSource instanceof SqliteDataSource ? new ConnectionPool(dataSource, SQLITE_CONNECTIONS) : null;
            this.dataSource = ownPool != null ? ownPool : dataSource;
        }

        /**
         * The table to use, default {@value #DEFAULT_TABLE}; distinct names let several
         * applications (or parallel test runs) share one database.
         */
        public Builder tableName(String table) {
            if (table == null || !TABLE_NAME.matcher(table).matches()) {
                throw new IllegalArgumentException("tableName must match " + TABLE_NAME + ", got '" + table + "'");
            }
            this.table = table;
            return this;
        }

        /** Where leases and expiries read the time; default {@link Clock#system()}. */
        public Builder clock(Clock clock) {
            if (clock == null) {
                throw new IllegalArgumentException("clock must not be null");
            }
            this.clock = clock;
            return this;
        }

        /**
         * Creates or migrates the table and returns the store.
         *
         * @throws IllegalArgumentException when the database is neither SQLite nor PostgreSQL
         * @throws IdempotencyStoreException when the database cannot be reached
         */
        public JdbcIdempotencyStore build() {
            try {
                Dialect dialect = Dialect.of(dataSource);
                if (dialect != Dialect.SQLITE && dialect != Dialect.POSTGRESQL) {
                    throw new IllegalArgumentException("dataSource must be SQLite or PostgreSQL, got " + dialect);
                }
                SchemaMigrations.apply(dataSource, "idempotency:" + table, migrations(table));
                return new JdbcIdempotencyStore(this, dialect);
            } catch (SQLException e) {
                throw new IdempotencyStoreException("cannot prepare table " + table, e);
            }
        }
    }

    private static List<Function<Dialect, List<String>>> migrations(String table) {
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
                "CREATE INDEX " + table + "_expires ON " + table + " (expires_at)"));
    }

    /** The table this store uses. */
    public String tableName() {
        return table;
    }

    public Dialect dialect() {
        return dialect;
    }

    @Override
    public Claim claim(IdempotencyScope scope, RequestFingerprint fingerprint, Duration lease, Duration expiry) {
        long leaseMillis = Durations.millis("lease", lease);
        long expiryMillis = Durations.millis("expiry", expiry);
        String id = scope.id();
        try (Connection c = connection()) {
            for (int round = 0; round < MAX_CLAIM_ROUNDS; round++) {
                long now = clock.currentTimeMillis();
                String token = UUID.randomUUID().toString();
                if (insert(c, id, fingerprint.hex(), token, now + leaseMillis, now + expiryMillis, now)) {
                    return new Claim.Acquired(token, Instant.ofEpochMilli(now + leaseMillis), false);
                }
                Optional<Row> existing = select(c, id);
                if (existing.isEmpty()) {
                    continue; // released between our insert and select: try again
                }
                Row row = existing.get();
                switch (ClaimRules.decide(row.completed, row.fingerprint, fingerprint.hex(), row.leaseUntil,
                        row.expiresAt, now)) {
                    case MISMATCH:
                        return new Claim.Mismatch();
                    case REPLAY:
                        return new Claim.Replay(row.response());
                    case IN_FLIGHT:
                        return new Claim.InFlight(Instant.ofEpochMilli(row.leaseUntil));
                    case REPLACE_EXPIRED:
                        deleteExpired(c, id, now);
                        break;
                    case TAKE_OVER:
                        if (takeOver(c, id, row.token, token, now, now + leaseMillis, now + expiryMillis)) {
                            return new Claim.Acquired(token, Instant.ofEpochMilli(now + leaseMillis), true);
                        }
                        break;
                    default:
                        throw new IllegalStateException("unknown claim rule");
                }
            }
            throw new IdempotencyStoreException("no stable answer for a claim after " + MAX_CLAIM_ROUNDS
                    + " rounds of concurrent changes", null);
        } catch (SQLException e) {
            throw new IdempotencyStoreException("claim failed on table " + table, e);
        }
    }

    private boolean insert(Connection c, String id, String fingerprint, String token, long leaseUntil,
                           long expiresAt, long now) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(insertClaim)) {
            ps.setString(1, id);
            ps.setString(2, fingerprint);
            ps.setString(3, "IN_FLIGHT");
            ps.setString(4, token);
            ps.setLong(5, leaseUntil);
            ps.setLong(6, expiresAt);
            ps.setLong(7, now);
            return ps.executeUpdate() == 1;
        }
    }

    private boolean takeOver(Connection c, String id, String oldToken, String token, long now, long leaseUntil,
                             long expiresAt) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("UPDATE " + table
                + " SET lease_token = ?, lease_until = ?, expires_at = ?"
                + " WHERE scope_id = ? AND state = 'IN_FLIGHT' AND lease_token = ? AND lease_until <= ?")) {
            ps.setString(1, token);
            ps.setLong(2, leaseUntil);
            ps.setLong(3, expiresAt);
            ps.setString(4, id);
            ps.setString(5, oldToken);
            ps.setLong(6, now);
            return ps.executeUpdate() == 1;
        }
    }

    private void deleteExpired(Connection c, String id, long now) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(
                "DELETE FROM " + table + " WHERE scope_id = ? AND expires_at <= ?")) {
            ps.setString(1, id);
            ps.setLong(2, now);
            ps.executeUpdate();
        }
    }

    @Override
    public boolean complete(IdempotencyScope scope, String leaseToken, StoredResponse response, Duration expiry) {
        long expiryMillis = Durations.millis("expiry", expiry);
        try (Connection c = connection();
             PreparedStatement ps = c.prepareStatement("UPDATE " + table
                     + " SET state = 'COMPLETED', lease_token = NULL, status = ?, headers = ?, body = ?, expires_at = ?"
                     + " WHERE scope_id = ? AND state = 'IN_FLIGHT' AND lease_token = ?")) {
            ps.setInt(1, response.status());
            ps.setString(2, HeaderCodec.encode(response.headers()));
            ps.setBytes(3, response.body());
            ps.setLong(4, clock.currentTimeMillis() + expiryMillis);
            ps.setString(5, scope.id());
            ps.setString(6, leaseToken);
            return ps.executeUpdate() == 1;
        } catch (SQLException e) {
            throw new IdempotencyStoreException("complete failed on table " + table, e);
        }
    }

    @Override
    public boolean release(IdempotencyScope scope, String leaseToken) {
        try (Connection c = connection();
             PreparedStatement ps = c.prepareStatement("DELETE FROM " + table
                     + " WHERE scope_id = ? AND state = 'IN_FLIGHT' AND lease_token = ?")) {
            ps.setString(1, scope.id());
            ps.setString(2, leaseToken);
            return ps.executeUpdate() == 1;
        } catch (SQLException e) {
            throw new IdempotencyStoreException("release failed on table " + table, e);
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
            throw new IdempotencyStoreException("find failed on table " + table, e);
        }
    }

    @Override
    public int purgeExpired(int batchSize) {
        if (batchSize < 1) {
            throw new IllegalArgumentException("batchSize must be at least 1, got " + batchSize);
        }
        try (Connection c = connection();
             PreparedStatement ps = c.prepareStatement("DELETE FROM " + table + " WHERE scope_id IN"
                     + " (SELECT scope_id FROM " + table + " WHERE expires_at <= ? LIMIT ?)")) {
            ps.setLong(1, clock.currentTimeMillis());
            ps.setInt(2, batchSize);
            return ps.executeUpdate();
        } catch (SQLException e) {
            throw new IdempotencyStoreException("purge failed on table " + table, e);
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
            throw new IdempotencyStoreException("count failed on table " + table, e);
        }
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

    private Optional<Row> select(Connection c, String id) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT fingerprint, state, lease_token, lease_until,"
                + " expires_at, status, headers, body FROM " + table + " WHERE scope_id = ?")) {
            ps.setString(1, id);
            try (ResultSet rs = ps.executeQuery()) {
                if (!rs.next()) {
                    return Optional.empty();
                }
                boolean completed = "COMPLETED".equals(rs.getString(2));
                return Optional.of(new Row(rs.getString(1), completed, rs.getString(3), rs.getLong(4), rs.getLong(5),
                        rs.getInt(6), rs.getString(7), completed ? rs.getBytes(8) : null));
            }
        }
    }

    private record Row(String fingerprint, boolean completed, String token, long leaseUntil, long expiresAt,
                       int status, String headers, byte[] body) {
        StoredResponse response() {
            return StoredResponse.of(status, HeaderCodec.decode(headers), body == null ? new byte[0] : body);
        }
    }

    /**
     * Closes the SQLite connections this store keeps; any other data source belongs to the caller
     * and is left alone.
     */
    @Override
    public void close() {
        if (ownPool != null) {
            try {
                ownPool.close();
            } catch (SQLException e) {
                throw new IdempotencyStoreException("closing the SQLite connections failed", e);
            }
        }
    }

    @Override
    public String toString() {
        return "JdbcIdempotencyStore{" + dialect + ", table=" + table + "}";
    }
}
