package dev.stagger.jobs.internal;

import dev.stagger.jdbc.StoreException;
import java.sql.BatchUpdateException;
import java.sql.SQLException;
import org.jspecify.annotations.Nullable;

/**
 * Turns a driver's {@link SQLException} into the unchecked {@link StoreException} of the public
 * API, keeping bound values out of every message: a batch failure's message (PostgreSQL's quotes
 * the whole statement with its parameters, payload bytes included) is replaced by the first line
 * of the server's error, and so is any failure of a statement that bound a payload, whose detail
 * lines may quote the failing row.
 */
public final class StoreFailures {
    private StoreFailures() {
    }

    /** The failure of {@code operation} on {@code table}; {@code boundPayload} when the statement carried job payloads. */
    public static StoreException wrap(String operation, String table, SQLException e, boolean boundPayload) {
        SQLException cause = boundPayload || e instanceof BatchUpdateException ? withoutValues(e) : e;
        String state = cause.getSQLState();
        return new StoreException(operation + " failed on table " + table + (state == null ? "" : " (SQLState " + state + ")")
                + ": " + firstLine(cause.getMessage()), cause);
    }

    /** {@code e} as an exception whose messages name no bound value: the server's first line, its SQLState and code. */
    public static SQLException withoutValues(SQLException e) {
        SQLException source = e instanceof BatchUpdateException && e.getNextException() != null ? e.getNextException() : e;
        String message = source instanceof BatchUpdateException ? "a batched statement failed" : firstLine(source.getMessage());
        String state = source.getSQLState() != null ? source.getSQLState() : e.getSQLState();
        return new SQLException(message, state, source.getErrorCode());
    }

    private static String firstLine(@Nullable String message) {
        if (message == null) {
            return "";
        }
        int end = message.indexOf('\n');
        return (end < 0 ? message : message.substring(0, end)).strip();
    }
}
