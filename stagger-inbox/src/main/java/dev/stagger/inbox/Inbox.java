package dev.stagger.inbox;

import dev.stagger.Clock;
import dev.stagger.jdbc.Database;
import dev.stagger.jdbc.SchemaMode;
import dev.stagger.jdbc.SchemaNotReadyException;
import dev.stagger.jdbc.StoreException;
import dev.stagger.jdbc.StoreOptions;
import dev.stagger.jdbc.internal.Dialect;
import dev.stagger.jdbc.internal.SchemaMigrations;
import dev.stagger.jdbc.internal.StoreSetup;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.function.Function;
import javax.sql.DataSource;

/**
 * A processed-messages table that makes a consumer's effect happen once even when its message is
 * delivered twice: at-least-once brokers (RabbitMQ, SQS, Kafka), webhook senders that retry, a
 * consumer killed between its commit and its acknowledgement.
 *
 * <p>The handler calls {@link #record(Connection, String)} on the connection of its own
 * transaction, before its effect. The row and the effect then commit or roll back together: a
 * crash before the commit leaves neither (the redelivery runs the effect), a crash after it leaves
 * both (the redelivery finds the row and skips). Keys are the message id or a job key (order id,
 * event id), scoped by the inbox's {@link #name()} so that two consumers of one message each
 * process it once.
 *
 * <pre>{@code
 * Inbox inbox = Inbox.builder("billing", dataSource).build();
 * Transactions transactions = Transactions.of(dataSource);
 * MessageHandler handler = message -> transactions.run(connection -> {
 *     if (!inbox.record(connection, message.id().orElseThrow())) {
 *         return;                                   // processed before: do nothing
 *     }
 *     chargeCard(connection, message.body());       // the effect, in the same transaction
 * });
 * }</pre>
 *
 * <p>On PostgreSQL a second delivery racing the first in another transaction waits on the first's
 * row lock and then sees it as processed (or, if the first rolled back, records it and proceeds);
 * on SQLite the database's single writer does the same. Rows are kept for at least
 * {@link Builder#expiry(Duration) expiry} (default 7 days) and deleted by {@link #purgeExpired};
 * until a row is deleted its key stays a duplicate, so the expiry must be longer than any message
 * can take to come back (its whole retry schedule, and any re-drive from the dead letters).
 *
 * <p>Store failures throw {@link StoreException}. Thread-safe: each call uses only the connection
 * it is given, or borrows one from the data source.
 */
public final class Inbox {
    /** The default table name: {@code <prefix>inbox} with the default prefix. */
    public static final String DEFAULT_TABLE = StoreOptions.DEFAULT_TABLE_PREFIX + "inbox";
    /** The default time a processed key is kept. */
    public static final Duration DEFAULT_EXPIRY = Duration.ofDays(7);
    /** The longest key accepted: a message id, an event id or a job key. */
    public static final int MAX_KEY_LENGTH = 255;

    private static final int MAX_NAME_LENGTH = 100;

    private final String name;
    private final DataSource dataSource;
    private final String table;
    private final long expiryMillis;
    private final Clock clock;
    private final String insert;

    private Inbox(Builder b, StoreOptions options, Dialect dialect) {
        this.name = b.name;
        this.dataSource = b.dataSource;
        this.table = options.qualifiedTable("inbox");
        this.expiryMillis = b.expiry.toMillis();
        this.clock = options.clock();
        this.insert = dialect.insertIfAbsent(table, List.of("consumer", "message_key", "processed_at", "expires_at"),
                List.of("consumer", "message_key"));
    }

    /**
     * An inbox named {@code name} (the consumer whose messages it records: at most 100
     * characters) in a table of {@code dataSource}, SQLite or PostgreSQL.
     */
    public static Builder builder(String name, DataSource dataSource) {
        return new Builder(name, dataSource);
    }

    /** The consumer this inbox records for. */
    public String name() {
        return name;
    }

    /** The table it uses, {@code <prefix>inbox}, schema-qualified where a schema is set. */
    public String tableName() {
        return table;
    }

    /**
     * Records {@code key} as processed in {@code connection}'s current transaction.
     *
     * @return true when the key was not recorded before: run the effect, in the same transaction;
     *     false when it was: the message is a duplicate, do nothing
     * @throws StoreException when the statement fails (the caller's transaction should roll back)
     */
    public boolean record(Connection connection, String key) {
        Objects.requireNonNull(connection, "connection must not be null");
        checkKey(key);
        long now = clock.currentTimeMillis();
        try (PreparedStatement ps = connection.prepareStatement(insert)) {
            ps.setString(1, name);
            ps.setString(2, key);
            ps.setLong(3, now);
            ps.setLong(4, now + expiryMillis);
            return ps.executeUpdate() == 1;
        } catch (SQLException e) {
            throw new StoreException("recording a key failed on table " + table, e);
        }
    }

    /** True when {@code key} is recorded (and not yet purged); reads in a connection of its own. */
    public boolean contains(String key) {
        checkKey(key);
        try (Connection c = dataSource.getConnection();
             PreparedStatement ps = c.prepareStatement(
                     "SELECT 1 FROM " + table + " WHERE consumer = ? AND message_key = ?")) {
            ps.setString(1, name);
            ps.setString(2, key);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next();
            }
        } catch (SQLException e) {
            throw new StoreException("reading a key failed on table " + table, e);
        }
    }

    /**
     * Deletes up to {@code batchSize} keys of this inbox whose expiry has passed, in auto-commit.
     * Call it periodically (the CLI and a scheduled task both do); small batches keep locks short.
     *
     * @return the number of keys deleted
     */
    public int purgeExpired(int batchSize) {
        if (batchSize < 1) {
            throw new IllegalArgumentException("batchSize must be at least 1, got " + batchSize);
        }
        try (Connection c = dataSource.getConnection();
             PreparedStatement ps = c.prepareStatement("DELETE FROM " + table + " WHERE consumer = ? AND message_key IN"
                     + " (SELECT message_key FROM " + table + " WHERE consumer = ? AND expires_at <= ? LIMIT ?)")) {
            c.setAutoCommit(true);
            ps.setString(1, name);
            ps.setString(2, name);
            ps.setLong(3, clock.currentTimeMillis());
            ps.setInt(4, batchSize);
            return ps.executeUpdate();
        } catch (SQLException e) {
            throw new StoreException("purging expired keys failed on table " + table, e);
        }
    }

    private static void checkKey(String key) {
        Objects.requireNonNull(key, "key must not be null");
        if (key.isEmpty() || key.length() > MAX_KEY_LENGTH) {
            throw new IllegalArgumentException("key must have 1 to " + MAX_KEY_LENGTH + " characters, got '"
                    + (key.length() > 64 ? key.substring(0, 64) + "...' (" + key.length() + " characters)" : key + "'"));
        }
    }

    /** Version 1: the table and its expiry index (an index name takes no schema: it lives with its table). */
    private static List<Function<Dialect, List<String>>> migrations(String table, String name) {
        return List.of(dialect -> List.of(
                "CREATE TABLE " + table + " ("
                        + "consumer VARCHAR(" + MAX_NAME_LENGTH + ") NOT NULL, "
                        + "message_key VARCHAR(" + MAX_KEY_LENGTH + ") NOT NULL, "
                        + "processed_at BIGINT NOT NULL, "
                        + "expires_at BIGINT NOT NULL, "
                        + "PRIMARY KEY (consumer, message_key))",
                "CREATE INDEX " + name + "_expires ON " + table + " (consumer, expires_at)"));
    }

    @Override
    public String toString() {
        return "Inbox[" + name + ", table=" + table + "]";
    }

    /**
     * Configures an {@link Inbox}. The store options ({@link StoreOptions}: table prefix, schema,
     * clock, schema mode) are set one by one here or all at once with {@link #storeOptions}. Not
     * thread-safe.
     */
    public static final class Builder {
        private final String name;
        private final DataSource dataSource;
        private StoreOptions.Builder storeOptions = StoreOptions.builder();
        private Duration expiry = DEFAULT_EXPIRY;

        private Builder(String name, DataSource dataSource) {
            Objects.requireNonNull(name, "name must not be null");
            if (name.isBlank() || name.length() > MAX_NAME_LENGTH) {
                throw new IllegalArgumentException("name must have 1 to " + MAX_NAME_LENGTH
                        + " non-blank characters, got '" + (name.length() > 64 ? name.substring(0, 64)
                        + "...' (" + name.length() + " characters)" : name + "'"));
            }
            this.name = name;
            this.dataSource = Objects.requireNonNull(dataSource, "dataSource must not be null");
        }

        /**
         * All store options at once, replacing any set before. The inbox's times come from its
         * clock (they only say when a key may be purged), so options asking for the database's
         * clock are refused.
         */
        public Builder storeOptions(StoreOptions options) {
            Objects.requireNonNull(options, "storeOptions must not be null");
            if (options.databaseClock().orElse(false)) {
                throw new IllegalArgumentException("databaseClock is not supported by the inbox, got true");
            }
            this.storeOptions = options.toBuilder();
            return this;
        }

        /**
         * Prefix of every table the inbox writes: {@code <prefix>inbox} and the schema version
         * table {@code <prefix>schema_version}; default {@code stagger_}. Several inboxes (different
         * names) can share one table, and distinct prefixes keep parallel test runs apart. See
         * {@link StoreOptions.Builder#tablePrefix(String)}.
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

        /** Where processed and expiry times are read; default {@link Clock#system()}. */
        public Builder clock(Clock clock) {
            storeOptions.clock(clock);
            return this;
        }

        /**
         * {@link SchemaMode#MIGRATE} (default) creates or upgrades the table at {@link #build()};
         * {@link SchemaMode#VALIDATE} changes nothing and fails naming what is missing, for a
         * table created from {@link #schemaScript}.
         */
        public Builder schemaMode(SchemaMode schemaMode) {
            storeOptions.schemaMode(schemaMode);
            return this;
        }

        /** How long a processed key is kept at least; default 7 days. */
        public Builder expiry(Duration expiry) {
            Objects.requireNonNull(expiry, "expiry must not be null");
            if (expiry.isNegative() || expiry.isZero()) {
                throw new IllegalArgumentException("expiry must be positive, got " + expiry);
            }
            this.expiry = expiry;
            return this;
        }

        /**
         * The SQL that creates (version by version) the inbox's tables as configured here (prefix,
         * schema) on {@code database}, without touching any database: for a migration tool. An
         * inbox built with {@link SchemaMode#VALIDATE} accepts a database it was applied to.
         */
        public String schemaScript(Database database) {
            Objects.requireNonNull(database, "database must not be null");
            return schemaMigrations(storeOptions.build()).script(Dialect.of(database));
        }

        private static SchemaMigrations schemaMigrations(StoreOptions options) {
            String table = options.tablePrefix() + "inbox";
            return SchemaMigrations.builder("inbox:" + table).storeOptions(options).table(table)
                    .steps(migrations(options.qualifiedTable("inbox"), table)).build();
        }

        /**
         * Creates or migrates the table (or checks it, in {@link SchemaMode#VALIDATE}) and returns
         * the inbox.
         *
         * @throws IllegalArgumentException when the database is neither SQLite nor PostgreSQL, or
         *     a schema is set on SQLite
         * @throws SchemaNotReadyException in {@link SchemaMode#VALIDATE} when the table or its
         *     recorded version is missing
         * @throws StoreException when the database cannot be reached
         */
        public Inbox build() {
            StoreOptions options = storeOptions.build();
            try {
                Dialect dialect = StoreSetup.dialect(dataSource, options);
                schemaMigrations(options).prepare(dataSource, options.schemaMode());
                return new Inbox(this, options, dialect);
            } catch (SQLException e) {
                throw new StoreException("cannot prepare table " + options.qualifiedTable("inbox"), e);
            }
        }
    }
}
