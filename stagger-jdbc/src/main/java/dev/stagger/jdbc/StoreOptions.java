package dev.stagger.jdbc;

import dev.stagger.Clock;
import dev.stagger.jdbc.internal.Echo;
import java.util.Objects;
import java.util.Optional;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;

/**
 * What every Stagger store in a SQL database is told the same way: the prefix of its tables, the
 * PostgreSQL schema holding them, the application's clock, whether times come from the database
 * server's clock, and what happens to the schema at start-up. The job queue, the idempotency store
 * and the inbox take these options under these names, through their builders' setters of the same
 * name or all at once ({@code storeOptions(..)}), so one configuration can serve several stores:
 *
 * <pre>{@code
 * StoreOptions shop = StoreOptions.builder().tablePrefix("shop_").schemaMode(SchemaMode.VALIDATE).build();
 * JobQueue jobs = JobQueue.builder(dataSource).storeOptions(shop).build();          // shop_jobs
 * IdempotencyStore keys = JdbcIdempotencyStore.builder(dataSource).storeOptions(shop).build(); // shop_idempotency
 * Inbox inbox = Inbox.builder("billing", dataSource).storeOptions(shop).build();   // shop_inbox
 * }</pre>
 *
 * <p>Immutable and thread-safe. Each setter of the {@link Builder} checks its value at once and
 * throws {@link IllegalArgumentException} naming the option and the (shortened) value.
 */
public final class StoreOptions {
    /** The default table prefix: the tables are then {@code stagger_jobs}, {@code stagger_idempotency}, {@code stagger_inbox}. */
    public static final String DEFAULT_TABLE_PREFIX = "stagger_";

    private static final Pattern PREFIX = Pattern.compile("[a-z][a-z0-9_]{0,40}");
    private static final Pattern SCHEMA = Pattern.compile("[a-z_][a-z0-9_]{0,62}");
    private static final StoreOptions DEFAULTS = builder().build();

    private final String tablePrefix;
    private final @Nullable String schema;
    private final Clock clock;
    private final @Nullable Boolean databaseClock;
    private final SchemaMode schemaMode;

    private StoreOptions(Builder b) {
        this.tablePrefix = b.tablePrefix;
        this.schema = b.schema;
        this.clock = b.clock;
        this.databaseClock = b.databaseClock;
        this.schemaMode = b.schemaMode;
    }

    /**
     * Prefix {@value #DEFAULT_TABLE_PREFIX}, the connection's current schema, the system clock, the
     * database's clock on PostgreSQL only, and {@link SchemaMode#MIGRATE}.
     */
    public static StoreOptions defaults() {
        return DEFAULTS;
    }

    /** Starts from the {@linkplain #defaults() defaults}. */
    public static Builder builder() {
        return new Builder();
    }

    /** A builder holding these options, to change some of them. */
    public Builder toBuilder() {
        Builder b = new Builder();
        b.tablePrefix = tablePrefix;
        b.schema = schema;
        b.clock = clock;
        b.databaseClock = databaseClock;
        b.schemaMode = schemaMode;
        return b;
    }

    /** The table prefix. */
    public String tablePrefix() {
        return tablePrefix;
    }

    /** The PostgreSQL schema, when one is set. */
    public Optional<String> schema() {
        return Optional.ofNullable(schema);
    }

    /** The application's clock. */
    public Clock clock() {
        return clock;
    }

    /** Whether to use the database's clock, when set; empty means the database's default (true on PostgreSQL). */
    public Optional<Boolean> databaseClock() {
        return Optional.ofNullable(databaseClock);
    }

    /** What happens to the schema when the store is built. */
    public SchemaMode schemaMode() {
        return schemaMode;
    }

    /**
     * Whether a store on {@code database} uses the database's clock: the value set with
     * {@link Builder#databaseClock(boolean)}, else true on PostgreSQL and false on SQLite.
     */
    public boolean usesDatabaseClock(Database database) {
        Objects.requireNonNull(database, "database must not be null");
        return databaseClock != null ? databaseClock : database == Database.POSTGRESQL;
    }

    /** {@code name} with the prefix, qualified by the schema when one is set: {@code billing.shop_inbox}. */
    public String qualifiedTable(String name) {
        Objects.requireNonNull(name, "name must not be null");
        return (schema == null ? "" : schema + ".") + tablePrefix + name;
    }

    @Override
    public String toString() {
        return "StoreOptions{tablePrefix=" + tablePrefix + ", schema=" + schema + ", clock=" + clock
                + ", databaseClock=" + (databaseClock == null ? "default" : databaseClock) + ", schemaMode="
                + schemaMode + "}";
    }

    /** Configures {@link StoreOptions}; every setter checks its value at once. Not thread-safe. */
    public static final class Builder {
        private String tablePrefix = DEFAULT_TABLE_PREFIX;
        private @Nullable String schema;
        private Clock clock = Clock.system();
        private @Nullable Boolean databaseClock;
        private SchemaMode schemaMode = SchemaMode.MIGRATE;

        private Builder() {
        }

        /**
         * Prefix of every table a store writes, its schema version table
         * ({@code <prefix>schema_version}) included; default {@value #DEFAULT_TABLE_PREFIX}.
         * Distinct prefixes let several applications (or parallel test runs) share one database.
         * Lower-case letters, digits and underscores, starting with a letter, at most 41
         * characters.
         */
        public Builder tablePrefix(String tablePrefix) {
            if (tablePrefix == null || !PREFIX.matcher(tablePrefix).matches()) {
                throw new IllegalArgumentException("tablePrefix must match " + PREFIX + ", got " + Echo.of(tablePrefix));
            }
            this.tablePrefix = tablePrefix;
            return this;
        }

        /**
         * The PostgreSQL schema holding the tables, created when missing (unless the schema mode
         * is {@link SchemaMode#VALIDATE}); by default the connection's current schema. Lower-case
         * letters, digits and underscores, at most 63 characters. A store refuses it on SQLite
         * when it is built, and the job queue refuses it (its tables live in the connection's
         * current schema).
         */
        public Builder schema(String schema) {
            if (schema == null || !SCHEMA.matcher(schema).matches()) {
                throw new IllegalArgumentException("schema must match " + SCHEMA + ", got " + Echo.of(schema));
            }
            this.schema = schema;
            return this;
        }

        /**
         * The application's clock: where stored times come from when the database's clock is not
         * used (see {@link #databaseClock(boolean)}), and what times the store's background work
         * (a job pool's polls and heartbeats, the idempotency store's purge schedule); default
         * {@link Clock#system()}. A {@code VirtualClock} lets tests walk through schedules.
         */
        public Builder clock(Clock clock) {
            this.clock = Objects.requireNonNull(clock, "clock must not be null");
            return this;
        }

        /**
         * Whether leases, run-at times and expiries are computed and compared in SQL with the
         * database server's clock (true) or with the store's {@link #clock(Clock) clock} (false).
         * Default: true on PostgreSQL, where servers whose clocks may disagree share the tables
         * (one whose clock runs ahead would otherwise take over live leases early); false on
         * SQLite, one file on one machine whose clock every user shares. The inbox always uses the
         * store's clock (its times only say when a key may be purged) and refuses {@code true}.
         */
        public Builder databaseClock(boolean databaseClock) {
            this.databaseClock = databaseClock;
            return this;
        }

        /**
         * {@link SchemaMode#MIGRATE} (default) creates or upgrades the tables when the store is
         * built; {@link SchemaMode#VALIDATE} changes nothing and fails naming what is missing, for
         * schemas applied from the SQL files the stores ship, and for tools that must not create
         * tables.
         */
        public Builder schemaMode(SchemaMode schemaMode) {
            this.schemaMode = Objects.requireNonNull(schemaMode, "schemaMode must not be null");
            return this;
        }

        /** The options set so far. */
        public StoreOptions build() {
            return new StoreOptions(this);
        }
    }
}
