package dev.stagger.jdbc;

import dev.stagger.jdbc.internal.Drivers;
import dev.stagger.jdbc.internal.SimpleDataSource;
import java.io.PrintWriter;
import java.sql.SQLFeatureNotSupportedException;
import java.util.logging.Logger;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import javax.sql.DataSource;

/**
 * A {@link DataSource} that opens a new connection per call from a JDBC URL (no pooling). Handy
 * for command-line tools and tests; use a pool (HikariCP) in services.
 */
public final class UrlDataSource implements DataSource {
    private final String url;
    private final String user;
    private final String password;

    private UrlDataSource(String url, String user, String password) {
        this.url = url;
        this.user = user;
        this.password = password;
    }

    /** @param user null to take the user (if any) from the URL */
    public static UrlDataSource of(String url, String user, String password) {
        if (url == null || !url.startsWith("jdbc:")) {
            throw new IllegalArgumentException("url must be a JDBC URL starting with 'jdbc:', got '" + url + "'");
        }
        return new UrlDataSource(url, user, password);
    }

    public String url() {
        return url;
    }

    @Override
    public Connection getConnection() throws SQLException {
        Drivers.require(url);
        return user == null ? DriverManager.getConnection(url) : DriverManager.getConnection(url, user, password);
    }

    @Override
    public Connection getConnection(String username, String pass) throws SQLException {
        Drivers.require(url);
        return DriverManager.getConnection(url, username, pass);
    }

    @Override
    public void setLoginTimeout(int seconds) {
        DriverManager.setLoginTimeout(seconds);
    }

    @Override
    public int getLoginTimeout() {
        return DriverManager.getLoginTimeout();
    }

    @Override
    public String toString() {
        return "UrlDataSource{" + url + "}";
    }

    // DataSource's optional parts, as for every Stagger connection factory
    private final SimpleDataSource support = new SimpleDataSource() {
        @Override
        public Connection getConnection() throws SQLException {
            return UrlDataSource.this.getConnection();
        }
    };

    @Override
    public PrintWriter getLogWriter() throws SQLException {
        return support.getLogWriter();
    }

    @Override
    public void setLogWriter(PrintWriter out) throws SQLException {
        support.setLogWriter(out);
    }

    @Override
    public Logger getParentLogger() throws SQLFeatureNotSupportedException {
        return support.getParentLogger();
    }

    @Override
    public <T> T unwrap(Class<T> iface) throws SQLException {
        if (iface.isInstance(this)) {
            return iface.cast(this);
        }
        throw new SQLException("not a wrapper for " + iface);
    }

    @Override
    public boolean isWrapperFor(Class<?> iface) {
        return iface.isInstance(this);
    }
}
