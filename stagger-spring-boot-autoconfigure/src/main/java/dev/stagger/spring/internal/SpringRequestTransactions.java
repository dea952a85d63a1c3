package dev.stagger.spring.internal;

import dev.stagger.idempotency.servlet.RequestTransactions;
import java.sql.Connection;
import java.sql.SQLException;
import javax.sql.DataSource;
import org.springframework.jdbc.CannotGetJdbcConnectionException;
import org.springframework.jdbc.datasource.DataSourceUtils;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.TransactionDefinition;
import org.springframework.transaction.TransactionException;
import org.springframework.transaction.TransactionStatus;
import org.springframework.transaction.support.DefaultTransactionDefinition;

/**
 * A keyed request's transaction begun through the application's transaction manager, so that
 * {@code @Transactional} code, {@code JdbcTemplate} and JPA in the handler (on the same thread)
 * join it, and the idempotency filter stores the response on its connection: the one the manager
 * bound for the store's {@code DataSource}. Always a new transaction ({@code REQUIRES_NEW}): the
 * filter's commit must be a real commit, never a join into something outside the request.
 */
public final class SpringRequestTransactions implements RequestTransactions {
    private static final TransactionDefinition NEW = new DefaultTransactionDefinition(
            TransactionDefinition.PROPAGATION_REQUIRES_NEW);

    private final PlatformTransactionManager transactionManager;
    private final DataSource dataSource;

    public SpringRequestTransactions(PlatformTransactionManager transactionManager, DataSource dataSource) {
        this.transactionManager = transactionManager;
        this.dataSource = dataSource;
    }

    /**
     * @throws SQLException when no transaction or connection can be had (the database is down)
     * @throws IllegalStateException when the transaction manager does not manage the store's DataSource
     */
    @Override
    public Transaction begin() throws SQLException {
        TransactionStatus status;
        try {
            status = transactionManager.getTransaction(NEW);
        } catch (TransactionException e) {
            throw new SQLException("cannot begin a transaction", e);
        }
        Connection connection;
        try {
            connection = DataSourceUtils.getConnection(dataSource);
        } catch (CannotGetJdbcConnectionException e) {
            rollbackQuietly(status);
            throw new SQLException("cannot get a connection in the transaction", e);
        }
        if (!DataSourceUtils.isConnectionTransactional(connection, dataSource)) {
            DataSourceUtils.releaseConnection(connection, dataSource);
            rollbackQuietly(status);
            throw new IllegalStateException("the transaction manager " + transactionManager.getClass().getName()
                    + " does not manage the idempotency store's DataSource: stagger.idempotency.transactional"
                    + " needs the two on one DataSource");
        }
        return new Transaction() {
            @Override
            public Connection connection() {
                return connection;
            }

            @Override
            public void commit() throws SQLException {
                DataSourceUtils.releaseConnection(connection, dataSource);
                try {
                    transactionManager.commit(status);
                } catch (TransactionException e) {
                    throw new SQLException("commit failed", e);
                }
            }

            @Override
            public void rollback() throws SQLException {
                DataSourceUtils.releaseConnection(connection, dataSource);
                try {
                    transactionManager.rollback(status);
                } catch (TransactionException e) {
                    throw new SQLException("rollback failed", e);
                }
            }
        };
    }

    private void rollbackQuietly(TransactionStatus status) {
        try {
            transactionManager.rollback(status);
        } catch (TransactionException e) {
            // nothing was written in it
        }
    }

    @Override
    public String toString() {
        return "SpringRequestTransactions{" + transactionManager.getClass().getSimpleName() + "}";
    }
}
