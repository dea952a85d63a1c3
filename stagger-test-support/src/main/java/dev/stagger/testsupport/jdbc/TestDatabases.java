package dev.stagger.testsupport.jdbc;

import dev.stagger.testsupport.Services;
import java.sql.Connection;
import java.sql.SQLException;

/**
 * Finds the local test databases. Where one is unreachable a test is skipped with a message
 * saying how to provide it, except under {@code CI=true}, where it fails instead.
 *
 * <p>PostgreSQL: {@code STAGGER_PG_URL} (default {@code jdbc:postgresql://127.0.0.1:5432/test}),
 * user {@code STAGGER_PG_USER} (default {@code postgres}), password {@code STAGGER_PG_PASSWORD}.
 * MariaDB: {@code STAGGER_MARIADB_URL} (default {@code jdbc:mariadb://127.0.0.1:3306/test}), user
 * {@code STAGGER_MARIADB_USER} (default {@code root}), password {@code STAGGER_MARIADB_PASSWORD}.
 */
public final class TestDatabases {
    private TestDatabases() {
    }

    /** A reachable PostgreSQL, or the test is skipped (failed under CI). */
    public static TestDataSource postgres() {
        return require("PostgreSQL", env("STAGGER_PG_URL", "jdbc:postgresql://127.0.0.1:5432/test"),
                env("STAGGER_PG_USER", "postgres"), env("STAGGER_PG_PASSWORD", ""), "STAGGER_PG_URL");
    }

    /** A reachable MariaDB, or the test is skipped (failed under CI). */
    public static TestDataSource mariadb() {
        return require("MariaDB", env("STAGGER_MARIADB_URL", "jdbc:mariadb://127.0.0.1:3306/test"),
                env("STAGGER_MARIADB_USER", "root"), env("STAGGER_MARIADB_PASSWORD", ""), "STAGGER_MARIADB_URL");
    }

    private static TestDataSource require(String what, String url, String user, String password, String variable) {
        TestDataSource ds = new TestDataSource(url, user, password);
        String problem = null;
        try (Connection c = ds.getConnection()) {
            if (!c.isValid(5)) {
                problem = "connection not valid";
            }
        } catch (SQLException e) {
            problem = e.getMessage();
        }
        Services.require(what, problem == null, what + " is not reachable at " + url + " (" + problem + "); set "
                + variable + " to run this test");
        return ds;
    }

    private static String env(String name, String fallback) {
        String v = System.getenv(name);
        return v == null || v.isBlank() ? fallback : v;
    }
}
