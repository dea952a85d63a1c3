package dev.stagger.jdbc;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.Locale;
import javax.sql.DataSource;

/** The databases Stagger's stores know how to talk to. */
public enum Dialect {
    SQLITE,
    POSTGRESQL,
    MARIADB,
    H2,
    OTHER;

    /** Detects the dialect from the connection's metadata. */
    public static Dialect of(Connection connection) throws SQLException {
        String product = connection.getMetaData().getDatabaseProductName().toLowerCase(Locale.ROOT);
        if (product.contains("sqlite")) {
            return SQLITE;
        }
        if (product.contains("postgres")) {
            return POSTGRESQL;
        }
        if (product.contains("mariadb") || product.contains("mysql")) {
            return MARIADB;
        }
        if (product.contains("h2")) {
            return H2;
        }
        return OTHER;
    }

    /** Detects the dialect of a data source (borrows one connection). */
    public static Dialect of(DataSource dataSource) throws SQLException {
        try (Connection c = dataSource.getConnection()) {
            return of(c);
        }
    }

    /** True when the database supports {@code SELECT ... FOR UPDATE SKIP LOCKED}. */
    public boolean supportsSkipLocked() {
        return this == POSTGRESQL || this == MARIADB;
    }
}
