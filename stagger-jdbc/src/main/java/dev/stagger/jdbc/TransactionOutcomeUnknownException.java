package dev.stagger.jdbc;

import java.sql.SQLException;

/**
 * The connection failed while the transaction was committing, so nobody knows whether it
 * committed. Re-running it could apply it twice, so {@link SqlClassifier} never retries this
 * exception. The driver's failure is the cause. Check the database (for example, look up a
 * unique operation id the unit of work writes) before running the unit of work again, or let
 * {@link Transactions} retry it anyway with
 * {@link Transactions.Builder#retryWhenCommitOutcomeUnknown(boolean)} if the unit of work is
 * idempotent.
 */
public final class TransactionOutcomeUnknownException extends SQLException {
    private static final long serialVersionUID = 1L;

    public TransactionOutcomeUnknownException(SQLException cause) {
        super("the connection failed during commit; the transaction may or may not have committed: "
                + cause.getMessage(), null, 0, cause);
    }
}
