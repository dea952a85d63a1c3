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
 * processes at once (a concurrent creator's duplicate insert is tolerated and re-checked).
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
            try (Statement s = c.createStatement()) {
                s.execute("CREATE TABLE IF NOT EXISTS stagger_schema_version ("
                        + "component VARCHAR(100) PRIMARY KEY, version INTEGER NOT NULL)");
            }
            boolean autoCommit = c.getAutoCommit();
            try {
                for (int version = currentVersion(c, component); version < steps.size(); version++) {
                    c.setAutoCommit(false);
                    try {
                        if (dialect == Dialect.POSTGRESQL) {
                            try (Statement lock = c.createStatement()) {
                                // serialises concurrent migrators of the same database
                                lock.execute("SELECT pg_advisory_xact_lock(" + component.hashCode() + ")");
                            }
                        }
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
                    } catch (SQLException e) {
                        c.rollback();
                        throw e;
                    }
                }
                return currentVersion(c, component);
            } finally {
                c.setAutoCommit(autoCommit);
            }
        }
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
