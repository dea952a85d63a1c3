package dev.stagger.jdbc;

import dev.stagger.jdbc.internal.Dialect;
import dev.stagger.AttemptContext;
import dev.stagger.Backoff;
import dev.stagger.Jitter;
import dev.stagger.Retry;
import dev.stagger.RetryPolicy;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.Optional;
import javax.sql.DataSource;
import org.jspecify.annotations.Nullable;

/**
 * Runs a unit of work in a database transaction and, when the database aborts it for a reason a
 * second try can fix (a deadlock, a serialization failure, a busy SQLite file), runs the
 * <em>whole</em> transaction again. Re-running only the failed statement would be wrong: the
 * database has already rolled back everything the transaction did before it.
 *
 * <p>Each attempt takes a fresh connection from the {@link DataSource}, sets the isolation level
 * and read-only flag if configured, turns auto-commit off, runs the unit of work and commits. If
 * anything throws, it rolls back. Either way it restores auto-commit, isolation and read-only to
 * what the connection had and closes the connection (returns it to the pool). A failure while
 * restoring or closing after a successful commit is ignored: the transaction did commit, and
 * reporting it as failed would invite a second, duplicate run. On a failed attempt such failures
 * are attached to the attempt's failure as suppressed exceptions.
 *
 * <p>Whether to retry is decided by the {@link Retry}'s policy, by default
 * {@link #defaultPolicy()}: {@link SqlClassifier} over up to 10 attempts with short jittered
 * waits. A failure of the commit itself that means the connection is gone (a connection
 * exception type, SQLState class {@code 08} including {@code 08007}, a server ending the session,
 * MySQL's "server gone away" or "lost connection") is reported as a
 * {@link TransactionOutcomeUnknownException} and not retried (unless
 * {@link Builder#retryWhenCommitOutcomeUnknown(boolean) asked}), because the commit may have
 * succeeded.
 *
 * <p><b>Time limits.</b> When the policy has an {@code attemptTimeout}, on PostgreSQL each attempt
 * starts with {@code SET LOCAL statement_timeout} so every statement of the transaction is
 * bounded; elsewhere a unit of work written as an {@link AttemptUnitOfWork} bounds its
 * statements with {@link #applyQueryTimeout(Statement, AttemptContext)}.
 *
 * <p>Immutable and thread-safe: one instance serves any number of concurrent transactions.
 */
public final class Transactions {
    private static final RetryPolicy DEFAULT_POLICY = RetryPolicy.builder()
            .maxAttempts(10)
            .backoff(Backoff.exponential(Duration.ofMillis(5)).multiplier(2)
                    .maxDelay(Duration.ofSeconds(1)).jitter(Jitter.full()))
            .classifier(SqlClassifier.defaults())
            .build();

    private static final int NO_ISOLATION = -1;

    private final DataSource dataSource;
    private final Retry retry;
    private final int isolation;
    private final boolean readOnly;
    private final boolean retryUnknownCommit;

    private Transactions(Builder b) {
        this.dataSource = b.dataSource;
        this.retry = b.retry != null ? b.retry : Retry.of("transaction", DEFAULT_POLICY);
        this.isolation = b.isolation;
        this.readOnly = b.readOnly;
        this.retryUnknownCommit = b.retryUnknownCommit;
    }

    /**
     * The policy for transactions that conflict with each other: 10 attempts; waits from 5 ms, x2,
     * capped at 1 s, full jitter (so the transactions that collided do not collide again in
     * lock-step); no deadline; {@link SqlClassifier#defaults()}. Contention clears in
     * milliseconds, so the waits start short; a caller that needs a time limit adds a deadline
     * with {@code defaultPolicy().toBuilder().deadline(..)}.
     */
    public static RetryPolicy defaultPolicy() {
        return DEFAULT_POLICY;
    }

    /** Transactions on {@code dataSource} with the {@link #defaultPolicy()} and the connection's own isolation. */
    public static Transactions of(DataSource dataSource) {
        return builder(dataSource).build();
    }

    public static Builder builder(DataSource dataSource) {
        return new Builder(dataSource);
    }

    /** The retry that runs the attempts (its listeners, breaker, budget and clock apply). */
    public Retry retry() {
        return retry;
    }

    /**
     * Runs {@code work} in a transaction, retrying the whole transaction as the policy allows.
     *
     * @return what the last, committed attempt returned
     * @throws Exception the last attempt's failure, unchanged, with earlier ones attached as
     *     suppressed; or a {@link dev.stagger.RetryRefusedException} when a breaker or budget refused
     */
    public <T> T call(UnitOfWork<T> work) throws Exception {
        if (work == null) {
            throw new NullPointerException("work must not be null");
        }
        return retry.call(context -> attempt(context, connection -> work.execute(connection)));
    }

    /** As {@link #call(UnitOfWork)}, also giving the unit of work the attempt in progress. */
    public <T> T call(AttemptUnitOfWork<T> work) throws Exception {
        if (work == null) {
            throw new NullPointerException("work must not be null");
        }
        return retry.call(context -> attempt(context, connection -> work.execute(connection, context)));
    }

    /** As {@link #call(UnitOfWork)} for a unit of work with no result. */
    public void run(VoidUnitOfWork work) throws Exception {
        if (work == null) {
            throw new NullPointerException("work must not be null");
        }
        @SuppressWarnings("NullAway") // a unit of work without a result answers null, Void's only value
        UnitOfWork<Void> unit = connection -> {
            work.execute(connection);
            return null;
        };
        retry.call(context -> attempt(context, unit));
    }

    /**
     * Bounds {@code statement} by the attempt's time limit: the policy's {@code attemptTimeout},
     * else the time left before its deadline; does nothing when there is neither. JDBC counts
     * whole seconds, so the limit is rounded up (at least 1 s).
     */
    public static void applyQueryTimeout(Statement statement, AttemptContext attempt) throws SQLException {
        Optional<Duration> limit = attempt.attemptTimeout().or(attempt::remaining);
        if (limit.isPresent()) {
            long millis = Math.max(1, limit.get().toMillis());
            long seconds = Math.min(Integer.MAX_VALUE, (millis + 999) / 1000);
            statement.setQueryTimeout((int) seconds);
        }
    }

    private <T> T attempt(AttemptContext context, UnitOfWork<T> work) throws Exception {
        Connection c = dataSource.getConnection();
        Throwable failure = null;
        boolean committed = false;
        boolean autoCommit = true;
        int originalIsolation = NO_ISOLATION;
        boolean originalReadOnly = false;
        boolean prepared = false;
        try {
            autoCommit = c.getAutoCommit();
            originalReadOnly = c.isReadOnly();
            if (isolation != NO_ISOLATION) {
                originalIsolation = c.getTransactionIsolation();
                if (originalIsolation != isolation) {
                    c.setTransactionIsolation(isolation);
                }
            }
            if (readOnly && !originalReadOnly) {
                c.setReadOnly(true);
            }
            if (autoCommit) {
                c.setAutoCommit(false);
            }
            prepared = true;
            boundStatements(c, context);
            T result = work.execute(c);
            commit(c);
            committed = true;
            return result;
        } catch (Throwable t) {
            failure = t;
            if (prepared && !(t instanceof TransactionOutcomeUnknownException)) {
                try {
                    c.rollback();
                } catch (SQLException | RuntimeException rollbackFailure) {
                    t.addSuppressed(rollbackFailure);
                }
            }
            throw t;
        } finally {
            restoreAndClose(c, autoCommit, originalIsolation, originalReadOnly, committed ? null : failure);
        }
    }

    private void boundStatements(Connection c, AttemptContext context) throws SQLException {
        Optional<Duration> timeout = context.attemptTimeout();
        if (timeout.isPresent() && Dialect.of(c) == Dialect.POSTGRESQL) {
            try (Statement s = c.createStatement()) {
                s.execute("SET LOCAL statement_timeout = " + Math.max(1, timeout.get().toMillis()));
            }
        }
    }

    private void commit(Connection c) throws SQLException {
        try {
            c.commit();
        } catch (SQLException e) {
            if (!retryUnknownCommit && SqlClassifier.meansConnectionLost(e)) {
                throw new TransactionOutcomeUnknownException(e);
            }
            throw e;
        }
    }

    /** Restores the connection's settings and closes it; {@code failure} (if any) collects problems. */
    private void restoreAndClose(Connection c, boolean autoCommit, int originalIsolation, boolean originalReadOnly,
                                 @Nullable Throwable failure) {
        try {
            if (autoCommit) {
                c.setAutoCommit(true);
            }
            if (readOnly && !originalReadOnly) {
                c.setReadOnly(false);
            }
            if (originalIsolation != NO_ISOLATION && originalIsolation != isolation) {
                c.setTransactionIsolation(originalIsolation);
            }
        } catch (SQLException | RuntimeException e) {
            if (failure != null) {
                failure.addSuppressed(e);
            }
        } finally {
            try {
                c.close();
            } catch (SQLException | RuntimeException e) {
                if (failure != null) {
                    failure.addSuppressed(e);
                }
            }
        }
    }

    @Override
    public String toString() {
        return "Transactions{" + retry + (isolation != NO_ISOLATION ? ", isolation=" + isolation : "")
                + (readOnly ? ", readOnly" : "") + "}";
    }

    /** Builds {@link Transactions}. Not thread-safe. */
    public static final class Builder {
        private final DataSource dataSource;
        private @Nullable Retry retry;
        private int isolation = NO_ISOLATION;
        private boolean readOnly;
        private boolean retryUnknownCommit;

        private Builder(DataSource dataSource) {
            if (dataSource == null) {
                throw new NullPointerException("dataSource must not be null");
            }
            this.dataSource = dataSource;
        }

        /**
         * The retry that runs the attempts, with its listeners, breaker, budget and clock. Give its
         * policy a {@link SqlClassifier} (as {@link Transactions#defaultPolicy()} has): the
         * core's default classifier would retry a constraint violation too.
         */
        public Builder retry(Retry retry) {
            if (retry == null) {
                throw new NullPointerException("retry must not be null");
            }
            this.retry = retry;
            return this;
        }

        /**
         * The isolation level for every attempt, one of {@link Connection}'s
         * {@code TRANSACTION_READ_UNCOMMITTED}, {@code _READ_COMMITTED}, {@code _REPEATABLE_READ}
         * or {@code _SERIALIZABLE}. Default: whatever the connection has.
         */
        public Builder isolation(int level) {
            if (level != Connection.TRANSACTION_READ_UNCOMMITTED && level != Connection.TRANSACTION_READ_COMMITTED
                    && level != Connection.TRANSACTION_REPEATABLE_READ && level != Connection.TRANSACTION_SERIALIZABLE) {
                throw new IllegalArgumentException("isolation must be a Connection.TRANSACTION_* level other than"
                        + " TRANSACTION_NONE, got " + level);
            }
            this.isolation = level;
            return this;
        }

        /** Marks the transactions read-only (a hint some databases use to avoid locks). Default false. */
        public Builder readOnly(boolean readOnly) {
            this.readOnly = readOnly;
            return this;
        }

        /**
         * Whether a lost connection during commit is retried like any other connection failure.
         * Only for units of work that are idempotent in the database (for example, they first
         * check a unique operation id): the lost commit may have succeeded. Default false.
         *
         * <p>With it, the commit's failure reaches the policy's classifier unchanged. A driver that
         * reports a lost commit as SQLState {@code 08007} (transaction resolution unknown) is still
         * not retried by {@link SqlClassifier#defaults()}: add the state to the classifier too,
         * {@code SqlClassifier.builder().retrySqlStates("08007")}.
         */
        public Builder retryWhenCommitOutcomeUnknown(boolean retry) {
            this.retryUnknownCommit = retry;
            return this;
        }

        public Transactions build() {
            return new Transactions(this);
        }
    }
}
