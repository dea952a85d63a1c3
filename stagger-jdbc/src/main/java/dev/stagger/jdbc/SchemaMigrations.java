package dev.stagger.jdbc;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import java.util.function.Function;
import javax.sql.DataSource;

/**
 * A tiny versioned schema migrator: each component (a store) keeps its version in
 * {@code stagger_schema_version}; {@link #apply} runs the steps past that version, each in its
 * own transaction, and records the new version. Safe to call at every start-up, and from several
 * processes at once: concurrent migrators of a component queue on a lock (a PostgreSQL advisory
 * lock, a MariaDB named lock, the SQLite write lock) and re-read the version once they hold it, so
 * each step runs exactly once. MariaDB commits DDL implicitly, so there a step that fails half-way
 * leaves its earlier statements applied: write its statements to be re-runnable
 * ({@code IF NOT EXISTS}).
 */
public final class SchemaMigrations {
    private SchemaMigrations() {
    }

    /**
     * Brings {@code component}'s schema to version {@code steps.size()}.
     *
     * @param steps step {@code i} (0-based) moves the schema from version {@code i} to {@code i + 1};
     *     given the dialect, it returns the statements to run
     * @return the version now in place
     */
    public static int apply(DataSource dataSource, String component,
                            List<Function<Dialect, List<String>>> steps) throws SQLException {
        if (component == null || component.isBlank()) {
            throw new IllegalArgumentException("component must not be blank, got '" + component + "'");
        }
        try (Connection c = dataSource.getConnection()) {
            Dialect dialect = Dialect.of(c);
            boolean autoCommit = c.getAutoCommit();
            try {
                createVersionTable(c, dialect);
                for (int version = currentVersion(c, component); version < steps.size(); version++) {
                    c.setAutoCommit(false);
                    boolean locked = false;
                    try {
                        locked = lock(c, dialect, component);
                        int now = currentVersion(c, component);
                        if (now > version) {
                            c.commit();
                            version = now - 1;
                            continue;
                        }
                        try (Statement s = c.createStatement()) {
                            for (String sql : steps.get(version).apply(dialect)) {
                                s.execute(sql);
                            }
                        }
                        setVersion(c, component, version + 1);
                        c.commit();
                    } catch (SQLException | RuntimeException e) {
                        c.rollback();
                        throw e;
                    } finally {
                        if (locked) {
                            unlock(c, dialect, component);
                        }
                    }
                }
                return currentVersion(c, component);
            } finally {
                c.setAutoCommit(autoCommit);
            }
        }
    }

    /**
     * Creates the version table. On PostgreSQL two concurrent {@code CREATE TABLE IF NOT EXISTS}
     * can both pass the existence check and one then fails on a catalog unique index, so creators
     * queue on an advisory lock first.
     */
    private static void createVersionTable(Connection c, Dialect dialect) throws SQLException {
        String ddl = "CREATE TABLE IF NOT EXISTS stagger_schema_version ("
                + "component VARCHAR(100) PRIMARY KEY, version INTEGER NOT NULL)";
        if (dialect != Dialect.POSTGRESQL) {
            try (Statement s = c.createStatement()) {
                s.execute(ddl);
            }
            return;
        }
        c.setAutoCommit(false);
        try (Statement s = c.createStatement()) {
            s.execute("SELECT pg_advisory_xact_lock(" + "stagger_schema_version".hashCode() + ")");
            s.execute(ddl);
            c.commit();
        } catch (SQLException | RuntimeException e) {
            c.rollback();
            throw e;
        } finally {
            c.setAutoCommit(true);
        }
    }

    /**
     * Serialises concurrent migrators of one component for the current transaction: PostgreSQL by
     * a transaction-scoped advisory lock, MariaDB by a named lock (released by {@link #unlock}),
     * SQLite by taking the database's write lock with a no-op write before reading the version.
     *
     * @return true when {@link #unlock} must be called
     */
    private static boolean lock(Connection c, Dialect dialect, String component) throws SQLException {
        switch (dialect) {
            case POSTGRESQL -> {
                try (Statement s = c.createStatement()) {
                    s.execute("SELECT pg_advisory_xact_lock(" + component.hashCode() + ")");
                }
                return false;
            }
            case MARIADB -> {
                try (PreparedStatement ps = c.prepareStatement("SELECT GET_LOCK(?, 60)")) {
                    ps.setString(1, lockName(component));
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
                        "UPDATE stagger_schema_version SET version = version WHERE component = ?")) {
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

    private static void unlock(Connection c, Dialect dialect, String component) throws SQLException {
        if (dialect == Dialect.MARIADB) {
            try (PreparedStatement ps = c.prepareStatement("SELECT RELEASE_LOCK(?)")) {
                ps.setString(1, lockName(component));
                ps.execute();
            }
        }
    }

    private static String lockName(String component) {
        String name = "stagger_schema:" + component;
        return name.length() <= 64 ? name : name.substring(0, 64); // MariaDB's lock-name limit
    }

    /** The recorded version of {@code component}, 0 when none. */
    public static int currentVersion(Connection c, String component) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(
                "SELECT version FROM stagger_schema_version WHERE component = ?")) {
            ps.setString(1, component);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() ? rs.getInt(1) : 0;
            }
        }
    }

    private static void setVersion(Connection c, String component, int version) throws SQLException {
        try (PreparedStatement up = c.prepareStatement(
                "UPDATE stagger_schema_version SET version = ? WHERE component = ?")) {
            up.setInt(1, version);
            up.setString(2, component);
            if (up.executeUpdate() == 1) {
                return;
            }
        }
        try (PreparedStatement ins = c.prepareStatement(
                "INSERT INTO stagger_schema_version (component, version) VALUES (?, ?)")) {
            ins.setString(1, component);
            ins.setInt(2, version);
            ins.executeUpdate();
        }
    }
}
