package dev.stagger.jdbc.internal;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import javax.sql.DataSource;

/**
 * The smallest connection pool that does the job: idle connections are kept and handed out again.
 * A store given a {@link dev.stagger.jdbc.SqliteDataSource} wraps it in one (the idempotency store
 * does), because opening a SQLite connection costs pragmas, and closing the last one checkpoints
 * the WAL with an fsync: without reuse that dominated each request. Services with their own pool
 * (HikariCP) pass that instead.
 *
 * <p>At most {@code maxSize} connections are out at once; a borrower waits up to 30 s for one to
 * come back. A connection closed underneath (server restart) is dropped instead of reused. Idle
 * connections are closed by {@link #close()}.
 */
public final class ConnectionPool extends SimpleDataSource implements AutoCloseable {
    private final DataSource target;
    private final LinkedBlockingQueue<Connection> idle = new LinkedBlockingQueue<>();
    private final Semaphore permits;

    public ConnectionPool(DataSource target, int maxSize) {
        if (maxSize < 1) {
            throw new IllegalArgumentException("maxSize must be at least 1, got " + maxSize);
        }
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
                        try {
                            if (physical.isClosed()) {
                                return null;
                            }
                            if (!physical.getAutoCommit()) {
                                physical.rollback();
                                physical.setAutoCommit(true);
                            }
                            idle.offer(physical);
                        } catch (SQLException broken) {
                            physical.close();
                        } finally {
                            permits.release();
                        }
                        return null;
                    }
                    if (method.getName().equals("isClosed") && closed.get()) {
                        return true;
                    }
                    if (closed.get()) {
                        throw new SQLException("connection already returned to the pool");
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

}
