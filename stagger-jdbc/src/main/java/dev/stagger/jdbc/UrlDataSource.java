package dev.stagger.jdbc;

import dev.stagger.jdbc.internal.Drivers;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import javax.sql.DataSource;
import org.jspecify.annotations.Nullable;

/**
 * A {@link DataSource} that opens a new connection per call from a JDBC URL (no pooling). Handy
 * for command-line tools and tests; use a pool (HikariCP) in services.
 */
public final class UrlDataSource extends FactoryDataSource {
    private final String url;
    private final @Nullable String user;
    private final @Nullable String password;

    private UrlDataSource(String url, @Nullable String user, @Nullable String password) {
        this.url = url;
        this.user = user;
        this.password = password;
    }

    /** @param user null to take the user (if any) from the URL */
    public static UrlDataSource of(String url, @Nullable String user, @Nullable String password) {
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
}
