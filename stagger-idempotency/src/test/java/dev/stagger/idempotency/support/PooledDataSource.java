package dev.stagger.idempotency.support;

import java.io.PrintWriter;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.logging.Logger;
import javax.sql.DataSource;

/**
 * The smallest connection pool that works for the load runs: idle connections are kept and handed
 * out again, so a measurement sees query time rather than connection setup (a service would use
 * HikariCP). Unbounded; connections are closed by {@link #close()}.
 */
public final class PooledDataSource implements DataSource, AutoCloseable {
    private final DataSource target;
    private final LinkedBlockingQueue<Connection> idle = new LinkedBlockingQueue<>();

    public PooledDataSource(DataSource target) {
        this.target = target;
    }

    @Override
    public Connection getConnection() throws SQLException {
        Connection real = idle.poll();
        if (real == null) {
            real = target.getConnection();
        }
        Connection physical = real;
        return (Connection) Proxy.newProxyInstance(Connection.class.getClassLoader(), new Class<?>[] {Connection.class},
                (proxy, method, args) -> {
                    if (method.getName().equals("close")) {
                        if (!physical.getAutoCommit()) {
                            physical.rollback();
                            physical.setAutoCommit(true);
                        }
                        idle.offer(physical);
                        return null;
                    }
                    try {
                        return method.invoke(physical, args);
                    } catch (InvocationTargetException e) {
                        throw e.getCause();
                    }
                });
    }

    @Override
    public void close() throws SQLException {
        Connection c;
        while ((c = idle.poll()) != null) {
            c.close();
        }
    }

    @Override
    public Connection getConnection(String username, String password) throws SQLException {
        return getConnection();
    }

    @Override
    public PrintWriter getLogWriter() {
        return null;
    }

    @Override
    public void setLogWriter(PrintWriter out) {
        // not used
    }

    @Override
    public void setLoginTimeout(int seconds) {
        // not used
    }

    @Override
    public int getLoginTimeout() {
        return 0;
    }

    @Override
    public Logger getParentLogger() throws SQLFeatureNotSupportedException {
        throw new SQLFeatureNotSupportedException();
    }

    @Override
    public <T> T unwrap(Class<T> iface) throws SQLException {
        throw new SQLException("not a wrapper");
    }

    @Override
    public boolean isWrapperFor(Class<?> iface) {
        return false;
    }
}
