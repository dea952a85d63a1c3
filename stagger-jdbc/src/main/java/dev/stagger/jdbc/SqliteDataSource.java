package dev.stagger.jdbc;

import dev.stagger.jdbc.internal.Drivers;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import javax.sql.DataSource;

/**
 * A {@link DataSource} over one SQLite file with the pragmas an embedded store wants: WAL
 * journaling (readers never block the writer), {@code busy_timeout} (a writer waits for the lock
 * instead of failing at once), {@code synchronous=NORMAL} (durable with WAL) and foreign keys on.
 * Each {@link #getConnection()} opens a new connection; pool them (HikariCP) under load.
 */
public final class SqliteDataSource extends FactoryDataSource {
    private final Path file;
    private final String url;
    private final long busyTimeoutMillis;

    private SqliteDataSource(Path file, Duration busyTimeout) {
        this.file = file;
        this.url = "jdbc:sqlite:" + file.toAbsolutePath();
        this.busyTimeoutMillis = busyTimeout.toMillis();
    }

    /** A data source for {@code file}, creating its parent directories; busy timeout 5 s. */
    public static SqliteDataSource file(Path file) {
        return file(file, Duration.ofSeconds(5));
    }

    /** A data source for {@code file} with the given busy timeout (zero: fail at once on a lock). */
    public static SqliteDataSource file(Path file, Duration busyTimeout) {
        if (file == null) {
            throw new NullPointerException("file must not be null");
        }
        if (busyTimeout == null || busyTimeout.isNegative()) {
            throw new IllegalArgumentException("busyTimeout must not be negative, got " + busyTimeout);
        }
        try {
            Path parent = file.toAbsolutePath().getParent();
            if (parent != null) {
                Files.createDirectories(parent);
            }
        } catch (java.io.IOException e) {
            throw new IllegalArgumentException("cannot create the directory for " + file + ": " + e.getMessage(), e);
        }
        return new SqliteDataSource(file, busyTimeout);
    }

    public Path path() {
        return file;
    }

    public String url() {
        return url;
    }

    @Override
    public Connection getConnection() throws SQLException {
        Drivers.require(url);
        Connection c = DriverManager.getConnection(url);
        try (Statement s = c.createStatement()) {
            s.execute("PRAGMA busy_timeout = " + busyTimeoutMillis);
            s.execute("PRAGMA journal_mode = WAL");
            s.execute("PRAGMA synchronous = NORMAL");
            s.execute("PRAGMA foreign_keys = ON");
        } catch (SQLException e) {
            c.close();
            throw e;
        }
        return c;
    }

    @Override
    public String toString() {
        return "SqliteDataSource{" + url + "}";
    }
}
