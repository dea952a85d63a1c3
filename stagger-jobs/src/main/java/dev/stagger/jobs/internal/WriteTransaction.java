package dev.stagger.jobs.internal;

import dev.stagger.jdbc.internal.Dialect;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;

/**
 * A transaction of the store that writes: begun, committed, rolled back if not committed, and the
 * connection given back with the auto-commit it had, in one place.
 *
 * <p>{@link #readThenWrite} is for one that reads and then writes on the rows it read (a rescue, a
 * purge). On SQLite it begins with {@code BEGIN IMMEDIATE}, taking the write lock before its
 * first read: a transaction that began by reading could not write once another connection had
 * committed since that read (WAL mode fails it at once with {@code SQLITE_BUSY_SNAPSHOT}, which no
 * busy timeout waits out), and on a busy queue some writer always has. With the lock taken first,
 * other writers wait for it up to their busy timeout like for any write. Elsewhere it is a plain
 * JDBC transaction; the rows it reads are locked by the statements themselves ({@code FOR UPDATE}).
 * {@link #writeFirst} is the plain JDBC transaction everywhere, for one whose first statement
 * writes (SQLite takes the lock with that statement).
 *
 * <p>Use with try-with-resources: closing rolls back what was not committed and restores the
 * auto-commit. One use per instance.
 */
final class WriteTransaction implements AutoCloseable {
    private final Connection c;
    private final boolean sqlite;
    private final boolean autoCommit;
    private boolean open = true;

    private WriteTransaction(Connection c, boolean sqlite, boolean autoCommit) {
        this.c = c;
        this.sqlite = sqlite;
        this.autoCommit = autoCommit;
    }

    static WriteTransaction readThenWrite(Connection c, Dialect dialect) throws SQLException {
        if (dialect != Dialect.SQLITE) {
            return writeFirst(c);
        }
        boolean autoCommit = c.getAutoCommit();
        // the driver's own transactions begin deferred: end its open one, if any, and begin ours
        c.setAutoCommit(true);
        WriteTransaction tx = new WriteTransaction(c, true, autoCommit);
        try {
            tx.exec("BEGIN IMMEDIATE");
        } catch (SQLException | RuntimeException e) {
            tx.open = false;
            tx.close();
            throw e;
        }
        return tx;
    }

    static WriteTransaction writeFirst(Connection c) throws SQLException {
        boolean autoCommit = c.getAutoCommit();
        c.setAutoCommit(false);
        return new WriteTransaction(c, false, autoCommit);
    }

    void commit() throws SQLException {
        if (sqlite) {
            exec("COMMIT");
        } else {
            c.commit();
        }
        open = false;
    }

    @Override
    public void close() throws SQLException {
        if (open) {
            open = false;
            try {
                if (sqlite) {
                    exec("ROLLBACK");
                } else {
                    c.rollback();
                }
            } catch (SQLException ignored) {
                // the connection is likely gone; the caller reconnects
            }
        }
        c.setAutoCommit(autoCommit);
    }

    private void exec(String sql) throws SQLException {
        try (Statement s = c.createStatement()) {
            s.execute(sql);
        }
    }
}
