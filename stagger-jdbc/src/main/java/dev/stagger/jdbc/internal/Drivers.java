package dev.stagger.jdbc.internal;

import java.sql.Driver;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.util.Map;

/**
 * Names the missing JDBC driver when no driver accepts a URL: Stagger's modules leave the driver
 * to the application (optional dependencies), so its absence must say which artifact to add.
 */
public final class Drivers {

    private static final Map<String, String> ARTIFACTS = Map.of(
            "sqlite", "org.xerial:sqlite-jdbc",
            "postgresql", "org.postgresql:postgresql",
            "mariadb", "org.mariadb.jdbc:mariadb-java-client",
            "mysql", "com.mysql:mysql-connector-j",
            "h2", "com.h2database:h2");

    private Drivers() {
    }

    /**
     * The registered driver for {@code url}.
     *
     * @throws SQLException naming the URL's subprotocol and the artifact that provides its driver
     *                      when none is on the class path or module path
     */
    public static Driver require(String url) throws SQLException {
        try {
            return DriverManager.getDriver(url);
        } catch (SQLException e) {
            String subprotocol = subprotocol(url);
            String artifact = ARTIFACTS.get(subprotocol);
            throw new SQLException("no JDBC driver for jdbc:" + subprotocol + " URLs: add "
                    + (artifact == null ? "the database's JDBC driver" : artifact)
                    + " to the application's dependencies (Stagger does not bring one)", "08001", e);
        }
    }

    private static String subprotocol(String url) {
        int start = url.indexOf(':') + 1;
        int end = url.indexOf(':', start);
        return end < 0 ? url.substring(start) : url.substring(start, end);
    }
}
