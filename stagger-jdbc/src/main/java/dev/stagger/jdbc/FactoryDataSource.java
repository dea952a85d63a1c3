package dev.stagger.jdbc;

import dev.stagger.jdbc.internal.SimpleDataSource;
import java.io.PrintWriter;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.util.logging.Logger;
import javax.sql.DataSource;
import org.jspecify.annotations.Nullable;

/**
 * The parts of {@link DataSource} that this package's connection factories do not use, answered as
 * {@link SimpleDataSource} answers them for every Stagger connection factory. Package-private, so
 * that no public class extends an internal one.
 */
abstract class FactoryDataSource implements DataSource {

    private final SimpleDataSource support = new SimpleDataSource() {
        @Override
        public Connection getConnection() throws SQLException {
            return FactoryDataSource.this.getConnection();
        }
    };

    @Override
    public Connection getConnection(String username, String password) throws SQLException {
        return support.getConnection(username, password);
    }

    @Override
    public void setLoginTimeout(int seconds) throws SQLException {
        support.setLoginTimeout(seconds);
    }

    @Override
    public int getLoginTimeout() throws SQLException {
        return support.getLoginTimeout();
    }

    @Override
    public @Nullable PrintWriter getLogWriter() throws SQLException {
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
        return isWrapperFor(iface) ? iface.cast(this) : support.unwrap(iface);
    }

    @Override
    public boolean isWrapperFor(Class<?> iface) {
        return iface.isInstance(this);
    }
}
