package dev.stagger.jdbc;

import java.sql.SQLException;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * A failure of one of Stagger's own stores (jobs, idempotency records, the inbox): unchecked, with
 * the driver's {@link SQLException} as its cause, including for the operations that run inside a
 * caller's transaction. The message names the operation and the table, never bound values.
 */
public class StoreException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public StoreException(String message, @Nullable SQLException cause) {
        super(message, cause);
    }

    /** The SQLState of the cause, when the driver gave one. */
    public Optional<String> sqlState() {
        return getCause() instanceof SQLException e ? Optional.ofNullable(e.getSQLState()) : Optional.empty();
    }
}
