package dev.stagger.spring;

import dev.stagger.Retry;
import dev.stagger.jdbc.UnitOfWork;
import dev.stagger.jdbc.VoidUnitOfWork;
import dev.stagger.spring.internal.InsideTransaction;
import java.sql.Connection;
import javax.sql.DataSource;
import org.jspecify.annotations.Nullable;
import org.springframework.jdbc.datasource.DataSourceUtils;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.TransactionDefinition;
import org.springframework.transaction.support.TransactionCallback;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * Retrying transactions that <em>are</em> Spring transactions: each attempt is one
 * {@link TransactionTemplate} transaction of the application's transaction manager, so
 * {@code JdbcTemplate}, JPA and jOOQ code inside it joins the transaction, and a deadlock or
 * serialization failure rolls back everything the attempt did before the whole unit runs again.
 *
 * <p>Why not {@code dev.stagger.jdbc.Transactions} in a Spring application: only the connection
 * it hands the unit of work is in its transaction. A {@code JdbcTemplate} call inside it takes a
 * connection of its own from the pool and commits at once, so when the unit fails after the call,
 * the call's write stays. Here {@link #call(UnitOfWork)} hands the unit of work the connection
 * Spring bound to the transaction, so both kinds of code share one transaction.
 *
 * <p>Retries happen only at the outermost transaction: called while a transaction is already
 * running, the unit joins it and runs once (the outer transaction is what has to be retried, and
 * after a deadlock the database has already aborted it); {@code @StaggerRetry} follows the same
 * rule ({@code stagger.annotation.inside-transaction}). Which failures are retried is the
 * retry's policy: by default {@code Transactions.defaultPolicy()} (SQL states 40001, 40P01, MySQL
 * 1213/1205, SQLite BUSY, ...; Spring's exceptions carry the SQLException as their cause).
 *
 * <p>Thread-safe.
 */
public final class RetryingTransactionTemplate {
    private final Retry retry;
    private final TransactionTemplate template;
    private final @Nullable DataSource dataSource;

    /**
     * @param dataSource the DataSource whose transactional connection {@link #call(UnitOfWork)}
     *     hands out (that of the transaction manager); null when there is no single one, and then
     *     each call fails
     */
    public RetryingTransactionTemplate(Retry retry, PlatformTransactionManager transactionManager,
                                       TransactionDefinition definition, @Nullable DataSource dataSource) {
        if (retry == null || transactionManager == null || definition == null) {
            throw new NullPointerException((retry == null ? "retry" : transactionManager == null
                    ? "transactionManager" : "definition") + " must not be null");
        }
        this.retry = retry;
        this.template = new TransactionTemplate(transactionManager, definition);
        this.dataSource = dataSource;
    }

    /** The retry running the attempts. */
    public Retry retry() {
        return retry;
    }

    /** Runs {@code action} in a transaction, retried as a whole; unchecked failures only, like TransactionTemplate. */
    public <T> T execute(TransactionCallback<T> action) {
        if (action == null) {
            throw new NullPointerException("action must not be null");
        }
        if (InsideTransaction.running()) {
            return template.execute(action);
        }
        return retry.get(() -> template.execute(action));
    }

    /**
     * Runs {@code work} in a transaction, retried as a whole, handing it the connection bound to
     * the transaction: {@code JdbcTemplate} calls inside see and join the same transaction.
     */
    public <T> @Nullable T call(UnitOfWork<T> work) throws Exception {
        if (work == null) {
            throw new NullPointerException("work must not be null");
        }
        DataSource ds = dataSource;
        if (ds == null) {
            throw new IllegalStateException("no DataSource: build with one to hand out its transactional connection");
        }
        if (InsideTransaction.running()) {
            return attempt(work, ds);
        }
        return retry.call(() -> attempt(work, ds));
    }

    /** As {@link #call(UnitOfWork)} for a unit of work with no result. */
    @SuppressWarnings("NullAway") // the unit of work of a void call answers null, which nobody reads
    public void run(VoidUnitOfWork work) throws Exception {
        if (work == null) {
            throw new NullPointerException("work must not be null");
        }
        call(connection -> {
            work.execute(connection);
            return null;
        });
    }

    // Spring's TransactionCallback may answer null (its T is @Nullable), which NullAway's standard mode does not see
    @SuppressWarnings("NullAway")
    private <T> @Nullable T attempt(UnitOfWork<T> work, DataSource dataSource) throws Exception {
        Exception[] checked = new Exception[1];
        T result = template.execute(status -> {
            Connection connection = DataSourceUtils.getConnection(dataSource);
            try {
                return work.execute(connection);
            } catch (RuntimeException | Error e) {
                throw e;
            } catch (Exception e) {
                checked[0] = e;
                status.setRollbackOnly();
                return null;
            } finally {
                DataSourceUtils.releaseConnection(connection, dataSource);
            }
        });
        if (checked[0] != null) {
            throw checked[0];
        }
        return result;
    }

    @Override
    public String toString() {
        return "RetryingTransactionTemplate{" + retry.name() + "}";
    }
}
