package dev.stagger.jdbc.internal;

import dev.stagger.jdbc.SchemaMode;
import dev.stagger.jdbc.SchemaNotReadyException;
import dev.stagger.jdbc.StoreOptions;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.Function;
import java.util.regex.Pattern;
import javax.sql.DataSource;
import org.jspecify.annotations.Nullable;

/**
 * The schema of one store (a component): its tables, the numbered steps that create and upgrade
 * them, and the table where the version in place is recorded. One definition serves three uses,
 * so they cannot drift apart:
 * <ul>
 *   <li>{@link #apply}: create or upgrade at start-up ({@link SchemaMode#MIGRATE});</li>
 *   <li>{@link #validate}: change nothing, fail naming what is missing ({@link SchemaMode#VALIDATE});</li>
 *   <li>{@link #script}: the same steps as plain SQL, for Flyway, Liquibase or an operator; the
 *       stores ship these files and test them against this definition.</li>
 * </ul>
 *
 * <p>The version table is {@code <tablePrefix>schema_version} (default {@code stagger_schema_version}),
 * so a table prefix covers every table a store writes. Releases before that always used
 * {@code stagger_schema_version}: a component recorded there is still recognised, and its version
 * is copied to the prefixed table on the first {@link #apply} (the old row is left for older
 * servers still running). With a {@linkplain StoreOptions#schema schema} (PostgreSQL), the version
 * table and every table live in it.
 *
 * <p>{@link #apply} runs each step past the recorded version in its own transaction and records
 * the new version. Safe at every start-up and from several processes at once: concurrent
 * migrators of a component queue on a lock (a PostgreSQL advisory lock, a MariaDB named lock, the
 * SQLite write lock) and re-read the version once they hold it, so each step runs exactly once.
 * MariaDB commits DDL implicitly, so there a step that fails half-way leaves its earlier
 * statements applied: write its statements to be re-runnable ({@code IF NOT EXISTS}).
 *
 * <p>Immutable and thread-safe.
 */
public final class SchemaMigrations {
    /** The default table prefix: the version table is then {@value #LEGACY_VERSION_TABLE}. */
    public static final String DEFAULT_TABLE_PREFIX = StoreOptions.DEFAULT_TABLE_PREFIX;
    /** What follows the table prefix in the version table's name. */
    public static final String VERSION_TABLE_SUFFIX = "schema_version";
    /** Where every component recorded its version before table prefixes covered the version table. */
    public static final String LEGACY_VERSION_TABLE = "stagger_schema_version";

    private static final Pattern COMPONENT = Pattern.compile("[A-Za-z0-9_:.\\-]{1,100}");
    private static final Pattern TABLE = Pattern.compile("[A-Za-z_][A-Za-z0-9_]{0,62}");

    private final String component;
    private final @Nullable String schema;
    private final String versionTable;
    private final List<String> tables;
    private final List<Function<Dialect, List<String>>> steps;

    private SchemaMigrations(Builder b) {
        this.component = b.component;
        this.schema = b.schema;
        this.versionTable = qualified(b.tablePrefix + VERSION_TABLE_SUFFIX);
        this.tables = b.tables.stream().map(this::qualified).toList();
        this.steps = List.copyOf(b.steps);
    }

    /**
     * Starts the definition of {@code component}'s schema.
     *
     * @param component the name its version is recorded under, e.g. {@code idempotency:stagger_idempotency};
     *     1-100 characters from {@code A-Z a-z 0-9 _ : . -}
     */
    public static Builder builder(String component) {
        if (component == null || !COMPONENT.matcher(component).matches()) {
            throw new IllegalArgumentException("component must match " + COMPONENT + ", got " + Echo.of(component));
        }
        return new Builder(component);
    }

    /** Configures {@link SchemaMigrations}; {@link #build()} validates and snapshots. Not thread-safe. */
    public static final class Builder {
        private final String component;
        private @Nullable String schema;
        private String tablePrefix = DEFAULT_TABLE_PREFIX;
        private final List<String> tables = new ArrayList<>();
        private final List<Function<Dialect, List<String>>> steps = new ArrayList<>();

        private Builder(String component) {
            this.component = component;
        }

        /**
         * The store's table prefix, which names the version table ({@code <prefix>schema_version}),
         * and its PostgreSQL schema, which holds the version table and the tables ({@link #apply}
         * creates it when missing); by default {@value #DEFAULT_TABLE_PREFIX} and the connection's
         * current schema (the first of its {@code search_path}). {@link StoreOptions} checked both.
         */
        public Builder storeOptions(StoreOptions options) {
            if (options == null) {
                throw new NullPointerException("storeOptions must not be null");
            }
            this.tablePrefix = options.tablePrefix();
            this.schema = options.schema().orElse(null);
            return this;
        }

        /**
         * A table the steps create, unqualified (the {@linkplain StoreOptions#schema schema} is added):
         * {@link SchemaMigrations#validate} checks it exists. Call once per table.
         */
        public Builder table(String name) {
            if (name == null || !TABLE.matcher(name).matches()) {
                throw new IllegalArgumentException("table must match " + TABLE + ", got " + Echo.of(name));
            }
            tables.add(name);
            return this;
        }

        /**
         * Adds the next step: step {@code n} (1-based, in the order added) moves the schema from
         * version {@code n - 1} to {@code n}. Given the dialect, it returns the statements to
         * run, with table names already qualified by the schema where one is set. Never change a
         * step once released; add another.
         */
        public Builder step(Function<Dialect, List<String>> step) {
            if (step == null) {
                throw new NullPointerException("step must not be null");
            }
            steps.add(step);
            return this;
        }

        /** Adds {@code steps} in order, as {@link #step} does for each. */
        public Builder steps(List<Function<Dialect, List<String>>> steps) {
            if (steps == null) {
                throw new NullPointerException("steps must not be null");
            }
            steps.forEach(this::step);
            return this;
        }

        public SchemaMigrations build() {
            return new SchemaMigrations(this);
        }
    }

    /** The component whose version this schema records. */
    public String component() {
        return component;
    }

    /** The configured schema, if any. */
    public Optional<String> schema() {
        return Optional.ofNullable(schema);
    }

    /** The version table, schema-qualified where a schema is set. */
    public String versionTable() {
        return versionTable;
    }

    /** The tables the steps create, schema-qualified where a schema is set; the version table is not among them. */
    public List<String> tables() {
        return tables;
    }

    /** The version the steps lead to: their number. */
    public int latestVersion() {
        return steps.size();
    }

    /**
     * Applies {@code mode}: {@link #apply} for {@link SchemaMode#MIGRATE}, {@link #validate} for
     * {@link SchemaMode#VALIDATE}.
     *
     * @return the version in place
     */
    public int prepare(DataSource dataSource, SchemaMode mode) throws SQLException {
        if (mode == null) {
            throw new NullPointerException("mode must not be null");
        }
        return mode == SchemaMode.MIGRATE ? apply(dataSource) : validate(dataSource);
    }

    /**
     * Brings the schema to {@link #latestVersion()}: creates the schema and the version table when
     * missing, adopts a version recorded by an older release in {@value #LEGACY_VERSION_TABLE},
     * and runs each missing step once.
     *
     * @return the version now in place
     * @throws SchemaNotReadyException when every table exists but no version is recorded (creating
     *     them again would fail): record the version, or drop the tables
     */
    public int apply(DataSource dataSource) throws SQLException {
        try (Connection c = dataSource.getConnection()) {
            Dialect dialect = dialectOf(c);
            boolean autoCommit = c.getAutoCommit();
            try {
                createVersionTable(c, dialect);
                adoptLegacyVersion(c, dialect);
                for (int version = versionIn(c, versionTable); version < steps.size(); version++) {
                    c.setAutoCommit(false);
                    boolean locked = false;
                    try {
                        locked = lock(c, dialect);
                        int now = versionIn(c, versionTable);
                        if (now > version) {
                            c.commit();
                            version = now - 1;
                            continue;
                        }
                        if (version == 0) {
                            refuseUnrecordedTables(c, dialect);
                        }
                        try (Statement s = c.createStatement()) {
                            for (String sql : steps.get(version).apply(dialect)) {
                                s.execute(sql);
                            }
                        }
                        setVersion(c, version + 1);
                        c.commit();
                    } catch (SQLException | RuntimeException e) {
                        c.rollback();
                        throw e;
                    } finally {
                        if (locked) {
                            unlock(c, dialect);
                        }
                    }
                }
                return versionIn(c, versionTable);
            } finally {
                c.setAutoCommit(autoCommit);
            }
        }
    }

    /**
     * Checks, without changing anything, that the version table and every table exist and that
     * the recorded version (in the version table, or in {@value #LEGACY_VERSION_TABLE} for a
     * database an older release created) is at least {@link #latestVersion()}.
     *
     * @return the recorded version
     * @throws SchemaNotReadyException naming the database, the missing tables and the versions
     */
    public int validate(DataSource dataSource) throws SQLException {
        try (Connection c = dataSource.getConnection()) {
            Dialect dialect = dialectOf(c);
            List<String> missing = new ArrayList<>();
            if (!exists(c, dialect, versionTable)
                    && !(hasLegacyTable(c, dialect) && versionIn(c, LEGACY_VERSION_TABLE) > 0)) {
                missing.add(versionTable);
            }
            for (String table : tables) {
                if (!exists(c, dialect, table)) {
                    missing.add(table);
                }
            }
            int version = currentVersion(c);
            if (missing.isEmpty() && version >= steps.size()) {
                return version;
            }
            StringBuilder m = new StringBuilder("The schema of ").append(component).append(" is not ready in ")
                    .append(database(c)).append(':');
            if (!missing.isEmpty()) {
                m.append(" missing ").append(String.join(", ", missing)).append(';');
            }
            m.append(" recorded version ").append(version).append(", this release needs ").append(steps.size())
                    .append(". Apply the SQL files shipped with the store (or script(..)), or let the store"
                            + " create the schema (SchemaMode.MIGRATE).");
            throw new SchemaNotReadyException(m.toString(), component, missing, version, steps.size());
        }
    }

    /**
     * The version recorded for this component: in the version table, else in
     * {@value #LEGACY_VERSION_TABLE} where an older release recorded it; 0 when none (or when
     * neither table exists).
     */
    public int currentVersion(Connection c) throws SQLException {
        Dialect dialect = dialectOf(c);
        int version = exists(c, dialect, versionTable) ? versionIn(c, versionTable) : 0;
        if (version == 0 && hasLegacyTable(c, dialect)) {
            version = versionIn(c, LEGACY_VERSION_TABLE);
        }
        return version;
    }

    /**
     * Step {@code version} as a plain SQL script for {@code dialect}: the statements {@link #apply}
     * runs, then the version record. The first also creates the schema (where one is set) and the
     * version table, both only if missing. Statements end with {@code ;} and a line break.
     *
     * @throws IllegalArgumentException when {@code version} is not 1..{@link #latestVersion()}
     */
    public String script(Dialect dialect, int version) {
        if (dialect == null) {
            throw new NullPointerException("dialect must not be null");
        }
        if (version < 1 || version > steps.size()) {
            throw new IllegalArgumentException("version must be 1.." + steps.size() + ", got " + version);
        }
        StringBuilder sql = new StringBuilder();
        sql.append("-- ").append(component).append(": schema version ").append(version).append(", ")
                .append(dialect).append('\n')
                .append("-- Generated from the definition the store applies at start-up (SchemaMigrations).\n");
        if (version == 1) {
            if (schema != null) {
                sql.append("CREATE SCHEMA IF NOT EXISTS ").append(schema).append(";\n");
            }
            sql.append(versionTableDdl()).append(";\n");
        }
        for (String statement : steps.get(version - 1).apply(dialect)) {
            sql.append(statement).append(";\n");
        }
        String literal = "'" + component + "'"; // the component's alphabet has no quote
        sql.append(version == 1
                ? "INSERT INTO " + versionTable + " (component, version) VALUES (" + literal + ", 1)"
                : "UPDATE " + versionTable + " SET version = " + version + " WHERE component = " + literal)
                .append(";\n");
        return sql.toString();
    }

    /** Every step from version 1 to {@link #latestVersion()} as one script ({@link #script(Dialect, int)} each). */
    public String script(Dialect dialect) {
        StringBuilder sql = new StringBuilder();
        for (int v = 1; v <= steps.size(); v++) {
            sql.append(v == 1 ? "" : "\n").append(script(dialect, v));
        }
        return sql.toString();
    }

    private String qualified(String table) {
        return schema == null ? table : schema + "." + table;
    }

    private Dialect dialectOf(Connection c) throws SQLException {
        Dialect dialect = Dialect.of(c);
        if (schema != null && dialect != Dialect.POSTGRESQL) {
            throw new IllegalArgumentException("schema is supported on PostgreSQL only, got " + dialect
                    + " with schema " + schema);
        }
        return dialect;
    }

    private String versionTableDdl() {
        return "CREATE TABLE IF NOT EXISTS " + versionTable + " (component VARCHAR(100) PRIMARY KEY, version INTEGER NOT NULL)";
    }

    /**
     * Creates the schema and the version table when missing. On PostgreSQL two concurrent
     * {@code CREATE ... IF NOT EXISTS} can both pass the existence check and one then fails on a
     * catalog unique index, so creators queue on an advisory lock first; the schema is created
     * only when absent, since {@code CREATE SCHEMA IF NOT EXISTS} needs the CREATE privilege even
     * when the schema is there.
     */
    private void createVersionTable(Connection c, Dialect dialect) throws SQLException {
        if (dialect != Dialect.POSTGRESQL) {
            try (Statement s = c.createStatement()) {
                s.execute(versionTableDdl());
            }
            return;
        }
        c.setAutoCommit(false);
        try (Statement s = c.createStatement()) {
            s.execute("SELECT pg_advisory_xact_lock(" + versionTable.hashCode() + ")");
            if (schema != null && !schemaExists(c)) {
                s.execute("CREATE SCHEMA " + schema);
            }
            s.execute(versionTableDdl());
            c.commit();
        } catch (SQLException | RuntimeException e) {
            c.rollback();
            throw e;
        } finally {
            c.setAutoCommit(true);
        }
    }

    private boolean schemaExists(Connection c) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT 1 FROM pg_namespace WHERE nspname = ?")) {
            ps.setString(1, schema);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next();
            }
        }
    }

    private boolean hasLegacyTable(Connection c, Dialect dialect) throws SQLException {
        return !versionTable.equals(LEGACY_VERSION_TABLE) && exists(c, dialect, LEGACY_VERSION_TABLE);
    }

    /**
     * A database an older release set up recorded this component in {@value #LEGACY_VERSION_TABLE}:
     * copy that version into the version table (once, under the migration lock), so the steps
     * already applied are not run again.
     */
    private void adoptLegacyVersion(Connection c, Dialect dialect) throws SQLException {
        if (versionIn(c, versionTable) > 0 || !hasLegacyTable(c, dialect) || versionIn(c, LEGACY_VERSION_TABLE) == 0) {
            return;
        }
        c.setAutoCommit(false);
        boolean locked = false;
        try {
            locked = lock(c, dialect);
            if (versionIn(c, versionTable) == 0) {
                setVersion(c, versionIn(c, LEGACY_VERSION_TABLE));
            }
            c.commit();
        } catch (SQLException | RuntimeException e) {
            c.rollback();
            throw e;
        } finally {
            if (locked) {
                unlock(c, dialect);
            }
            c.setAutoCommit(true);
        }
    }

    /** Every table of version 1 is there, yet no version is recorded: step 1 would fail on them. */
    private void refuseUnrecordedTables(Connection c, Dialect dialect) throws SQLException {
        if (tables.isEmpty()) {
            return;
        }
        for (String table : tables) {
            if (!exists(c, dialect, table)) {
                return;
            }
        }
        throw new SchemaNotReadyException("The tables of " + component + " (" + String.join(", ", tables)
                + ") exist in " + database(c) + " but no version is recorded for it in " + versionTable
                + ": record the version they are at, or drop them", component, List.of(), 0, steps.size());
    }

    private static boolean exists(Connection c, Dialect dialect, String table) throws SQLException {
        String sql = switch (dialect) {
            case POSTGRESQL -> "SELECT to_regclass(?) IS NOT NULL";
            case SQLITE -> "SELECT count(*) > 0 FROM sqlite_master WHERE type = 'table' AND name = ?";
            case MARIADB -> "SELECT count(*) > 0 FROM information_schema.tables WHERE table_schema = DATABASE()"
                    + " AND table_name = ?";
            case H2, OTHER -> null;
        };
        if (sql == null) {
            try (ResultSet rs = c.getMetaData().getTables(c.getCatalog(), c.getSchema(), table, null)) {
                return rs.next();
            }
        }
        try (PreparedStatement ps = c.prepareStatement(sql)) {
            ps.setString(1, table);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() && rs.getBoolean(1);
            }
        }
    }

    /** The JDBC URL without its parameters (which may carry credentials). */
    private static String database(Connection c) throws SQLException {
        String url = c.getMetaData().getURL();
        if (url == null) {
            return "the database";
        }
        int cut = url.length();
        for (char separator : new char[] {'?', ';'}) {
            int at = url.indexOf(separator);
            if (at >= 0) {
                cut = Math.min(cut, at);
            }
        }
        return url.substring(0, cut);
    }

    /**
     * Serialises concurrent migrators of one component for the current transaction: PostgreSQL by
     * a transaction-scoped advisory lock, MariaDB by a named lock (released by {@link #unlock}),
     * SQLite by taking the database's write lock with a no-op write before reading the version.
     *
     * @return true when {@link #unlock} must be called
     */
    private boolean lock(Connection c, Dialect dialect) throws SQLException {
        switch (dialect) {
            case POSTGRESQL -> {
                try (Statement s = c.createStatement()) {
                    s.execute("SELECT pg_advisory_xact_lock(" + component.hashCode() + ")");
                }
                return false;
            }
            case MARIADB -> {
                try (PreparedStatement ps = c.prepareStatement("SELECT GET_LOCK(?, 60)")) {
                    ps.setString(1, lockName());
                    try (ResultSet rs = ps.executeQuery()) {
                        if (!rs.next() || rs.getInt(1) != 1) {
                            throw new SQLException("timed out waiting for the migration lock of " + component);
                        }
                    }
                }
                return true;
            }
            case SQLITE -> {
                try (PreparedStatement ps = c.prepareStatement(
                        "UPDATE " + versionTable + " SET version = version WHERE component = ?")) {
                    ps.setString(1, component);
                    ps.executeUpdate();
                }
                return false;
            }
            default -> {
                return false;
            }
        }
    }

    private void unlock(Connection c, Dialect dialect) throws SQLException {
        if (dialect == Dialect.MARIADB) {
            try (PreparedStatement ps = c.prepareStatement("SELECT RELEASE_LOCK(?)")) {
                ps.setString(1, lockName());
                ps.execute();
            }
        }
    }

    private String lockName() {
        String name = "stagger_schema:" + component;
        return name.length() <= 64 ? name : name.substring(0, 64); // MariaDB's lock-name limit
    }

    private int versionIn(Connection c, String table) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT version FROM " + table + " WHERE component = ?")) {
            ps.setString(1, component);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() ? rs.getInt(1) : 0;
            }
        }
    }

    private void setVersion(Connection c, int version) throws SQLException {
        try (PreparedStatement up = c.prepareStatement("UPDATE " + versionTable + " SET version = ? WHERE component = ?")) {
            up.setInt(1, version);
            up.setString(2, component);
            if (up.executeUpdate() == 1) {
                return;
            }
        }
        try (PreparedStatement ins = c.prepareStatement(
                "INSERT INTO " + versionTable + " (component, version) VALUES (?, ?)")) {
            ins.setString(1, component);
            ins.setInt(2, version);
            ins.executeUpdate();
        }
    }

    @Override
    public String toString() {
        return "SchemaMigrations{" + component + ", version table " + versionTable + ", " + steps.size() + " steps}";
    }
}
