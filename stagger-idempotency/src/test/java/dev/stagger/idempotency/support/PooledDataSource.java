package dev.stagger.idempotency.support;

import java.io.PrintWriter;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.logging.Logger;
import javax.sql.DataSource;

/**
 * The smallest connection pool that works for the load runs: idle connections are kept and handed
 * out again, so a measurement sees query time rather than connection setup (a service would use
 * HikariCP). At most {@code maxSize} connections are out at once; a borrower waits for one to come
 * back. Idle connections are closed by {@link #close()}.
 */
public final class PooledDataSource implements DataSource, AutoCloseable {
    private final DataSource target;
    private final LinkedBlockingQueue<Connection> idle = new LinkedBlockingQueue<>();

    private final Semaphore permits;

    public PooledDataSource(DataSource target, int maxSize) {
        this.target = target;
        this.permits = new Semaphore(maxSize);
    }

    @Override
    public Connection getConnection() throws SQLException {
        try {
            if (!permits.tryAcquire(30, TimeUnit.SECONDS)) {
                throw new SQLException("no pooled connection free within 30 s");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new SQLException("interrupted while waiting for a connection", e);
        }
        Connection real = idle.poll();
        if (real == null) {
            try {
                real = target.getConnection();
            } catch (SQLException e) {
                permits.release();
                throw e;
            }
        }
        Connection physical = real;
        AtomicBoolean closed = new AtomicBoolean();
        return (Connection) Proxy.newProxyInstance(Connection.class.getClassLoader(), new Class<?>[] {Connection.class},
                (proxy, method, args) -> {
                    if (method.getName().equals("close")) {
                        if (closed.getAndSet(true)) {
                            return null;
                        }
                        if (!physical.getAutoCommit()) {
                            physical.rollback();
                            physical.setAutoCommit(true);
                        }
                        idle.offer(physical);
                        permits.release();
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
