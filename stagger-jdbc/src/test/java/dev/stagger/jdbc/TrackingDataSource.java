package dev.stagger.jdbc;

import dev.stagger.jdbc.internal.SimpleDataSource;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;

/**
 * Wraps a real data source and records what happens to its connections: how many were opened and
 * closed, and each connection's settings at the moment it was closed. It can make the next
 * commits fail with a given exception (after really committing, like a connection lost while the
 * server's acknowledgement was on its way).
 */
final class TrackingDataSource extends SimpleDataSource {
    /** A connection's settings when it was handed back. */
    record Settings(boolean autoCommit, int isolation, boolean readOnly) {
    }

    private final DataSource real;
    final AtomicInteger opened = new AtomicInteger();
    final AtomicInteger closed = new AtomicInteger();
    final List<Settings> settingsAtClose = new CopyOnWriteArrayList<>();
    private final AtomicInteger commitsToFail = new AtomicInteger();
    private volatile SQLException commitFailure;

    private final String onOpen;

    TrackingDataSource(DataSource real) {
        this(real, null);
    }

    /** @param onOpen a statement run on every new connection (a {@code SET search_path}, say), or null */
    TrackingDataSource(DataSource real, String onOpen) {
        this.real = real;
        this.onOpen = onOpen;
    }

    /** The next {@code times} commits commit and then throw {@code failure}. */
    void failCommitsAfterCommitting(int times, SQLException failure) {
        this.commitFailure = failure;
        this.commitsToFail.set(times);
    }

    @Override
    public Connection getConnection() throws SQLException {
        Connection connection = real.getConnection();
        if (onOpen != null) {
            try (java.sql.Statement s = connection.createStatement()) {
                s.execute(onOpen);
            }
        }
        opened.incrementAndGet();
        return (Connection) Proxy.newProxyInstance(Connection.class.getClassLoader(), new Class<?>[] {Connection.class},
                (proxy, method, args) -> {
                    if (method.getName().equals("close") && !connection.isClosed()) {
                        settingsAtClose.add(new Settings(connection.getAutoCommit(),
                                connection.getTransactionIsolation(), connection.isReadOnly()));
                        closed.incrementAndGet();
                    }
                    Object result;
                    try {
                        result = method.invoke(connection, args);
                    } catch (InvocationTargetException e) {
                        throw e.getCause();
                    }
                    if (method.getName().equals("commit") && commitsToFail.getAndDecrement() > 0) {
                        throw commitFailure;
                    }
                    return result;
                });
    }

}
