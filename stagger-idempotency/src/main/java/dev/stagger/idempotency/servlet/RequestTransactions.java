package dev.stagger.idempotency.servlet;

import java.sql.Connection;
import java.sql.SQLException;
import javax.sql.DataSource;

/**
 * Begins the database transaction in which a keyed request's handler runs and its response is
 * stored, so that the handler's writes and the stored response commit together or not at all
 * (see {@link IdempotencyFilter.Builder#transactional(RequestTransactions)}). The transaction
 * must be on the idempotency store's own database: the filter writes the completion on
 * {@link Transaction#connection()}.
 *
 * <p>{@link #jdbc(DataSource)} serves plain servlet code, which reaches the connection through
 * {@link IdempotencyFilter#transactionConnection(jakarta.servlet.ServletRequest)}; a framework
 * with a transaction manager of its own (Spring's starter) supplies one that opens the
 * transaction through it, so the application's transactional code joins it.
 */
@FunctionalInterface
public interface RequestTransactions {

    /**
     * Begins a transaction on the calling thread.
     *
     * @throws SQLException when the database cannot be reached; the filter then answers 503 and
     *     the handler does not run
     */
    Transaction begin() throws SQLException;

    /** One begun transaction: the filter commits it, or rolls it back, exactly once. */
    interface Transaction {
        /** The transaction's connection, in a transaction (not auto-commit). */
        Connection connection();

        /** Commits and ends the transaction. */
        void commit() throws SQLException;

        /** Rolls back and ends the transaction. */
        void rollback() throws SQLException;
    }

    /**
     * Transactions on connections borrowed from {@code dataSource} (the store's): auto-commit off
     * at {@link #begin()}, back on and the connection returned when the transaction ends.
     */
    static RequestTransactions jdbc(DataSource dataSource) {
        if (dataSource == null) {
            throw new NullPointerException("dataSource must not be null");
        }
        return () -> {
            Connection c = dataSource.getConnection();
            try {
                c.setAutoCommit(false);
            } catch (SQLException | RuntimeException e) {
                c.close();
                throw e;
            }
            return new Transaction() {
                @Override
                public Connection connection() {
                    return c;
                }

                @Override
                public void commit() throws SQLException {
                    end(true);
                }

                @Override
                public void rollback() throws SQLException {
                    end(false);
                }

                private void end(boolean commit) throws SQLException {
                    try (c) {
                        if (commit) {
                            c.commit();
                        } else {
                            c.rollback();
                        }
                        c.setAutoCommit(true);
                    }
                }
            };
        };
    }
}
