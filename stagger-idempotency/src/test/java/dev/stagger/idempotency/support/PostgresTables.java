package dev.stagger.idempotency.support;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.UUID;
import javax.sql.DataSource;

/** Unique table names per test run, so parallel runs sharing one PostgreSQL never collide. */
public final class PostgresTables {
    private PostgresTables() {
    }

    public static String uniqueName() {
        return "stagger_idempotency_t" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
    }

    /** Drops the table and forgets its schema version. */
    public static void drop(DataSource dataSource, String table) throws SQLException {
        try (Connection c = dataSource.getConnection(); Statement s = c.createStatement()) {
            s.execute("DROP TABLE IF EXISTS " + table);
            try (PreparedStatement ps = c.prepareStatement("DELETE FROM stagger_schema_version WHERE component = ?")) {
                ps.setString(1, "idempotency:" + table);
                ps.executeUpdate();
            }
        }
    }
}
