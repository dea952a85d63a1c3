package dev.stagger.idempotency.support;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.UUID;
import javax.sql.DataSource;

/** Table prefixes unique to a test run, so parallel runs sharing one PostgreSQL never collide. */
public final class PostgresTables {
    private PostgresTables() {
    }

    public static String uniquePrefix() {
        return "sidem_" + UUID.randomUUID().toString().replace("-", "").substring(0, 12) + "_";
    }

    /** Drops the store's table and its version table (the prefix covers both). */
    public static void drop(DataSource dataSource, String prefix) throws SQLException {
        try (Connection c = dataSource.getConnection(); Statement s = c.createStatement()) {
            s.execute("DROP TABLE IF EXISTS " + prefix + "idempotency");
            s.execute("DROP TABLE IF EXISTS " + prefix + "schema_version");
        }
    }
}
