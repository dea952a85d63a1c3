package dev.stagger.cli;

import java.net.ConnectException;
import java.net.NoRouteToHostException;
import java.net.SocketTimeoutException;
import java.net.UnknownHostException;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;

/**
 * One line for a person about a failed database operation: which database (host, port and
 * database, or the SQLite file; never credentials or query parameters) and every cause the driver
 * chained, so "The connection attempt failed." becomes "cannot connect to PostgreSQL at
 * db.example:5432/jobs: The connection attempt failed (unknown host db.example)".
 */
final class DatabaseErrors {
    private static final Pattern NETWORK_URL = Pattern.compile("jdbc:([a-z0-9]+)://(?:[^@/]*@)?([^/?;]*)(?:/([^?;]*))?.*",
            Pattern.CASE_INSENSITIVE);

    private DatabaseErrors() {
    }

    /** The first {@link SQLException} in {@code failure}'s cause chain, {@code failure} included; null when none. */
    static @Nullable SQLException sqlCause(Throwable failure) {
        for (Throwable t = failure; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t instanceof SQLException sql) {
                return sql;
            }
        }
        return null;
    }

    /** {@code failure} (an {@link SQLException} or one wrapping it) as one line naming the database at {@code db}. */
    static String describe(String db, Throwable failure) {
        String where = where(db);
        String causes = causes(failure);
        return (connectionFailure(failure) ? "cannot connect to " + where : "database error on " + where) + ": " + causes;
    }

    /** "PostgreSQL at host:5432/db", "SQLite file jobs.db", or the URL without its parameters. */
    static String where(String db) {
        if (!db.startsWith("jdbc:")) {
            return "SQLite file " + db;
        }
        if (db.startsWith("jdbc:sqlite:")) {
            return "SQLite file " + db.substring("jdbc:sqlite:".length());
        }
        Matcher m = NETWORK_URL.matcher(db);
        if (!m.matches()) {
            int cut = db.indexOf('?');
            return cut < 0 ? db : db.substring(0, cut);
        }
        String kind = m.group(1).toLowerCase(Locale.ROOT);
        String product = switch (kind) {
            case "postgresql" -> "PostgreSQL";
            case "mariadb" -> "MariaDB";
            case "mysql" -> "MySQL";
            default -> kind;
        };
        String hosts = m.group(2).isEmpty() ? "localhost" : m.group(2);
        String defaultPort = switch (kind) {
            case "postgresql" -> ":5432";
            case "mariadb", "mysql" -> ":3306";
            default -> "";
        };
        if (!hosts.contains(",") && !hosts.matches(".*:\\d+") && !hosts.endsWith("]")) {
            hosts += defaultPort;
        }
        String database = m.group(3) == null || m.group(3).isEmpty() ? "" : "/" + m.group(3);
        return product + " at " + hosts + database;
    }

    /** The SQLState class 08 (connection exception), or a network failure anywhere in the chain. */
    private static boolean connectionFailure(Throwable failure) {
        for (Throwable t = failure; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t instanceof SQLException sql && sql.getSQLState() != null && sql.getSQLState().startsWith("08")) {
                return true;
            }
            if (t instanceof UnknownHostException || t instanceof ConnectException || t instanceof NoRouteToHostException
                    || t instanceof SocketTimeoutException) {
                return true;
            }
        }
        return false;
    }

    /** The outermost SQL message, then in brackets every cause that adds something. */
    private static String causes(Throwable failure) {
        SQLException sql = sqlCause(failure);
        Throwable top = sql != null ? sql : failure;
        String head = text(top);
        List<String> more = new ArrayList<>();
        for (Throwable t = top.getCause(); t != null && more.size() < 4; t = t.getCause() == t ? null : t.getCause()) {
            String part = t instanceof UnknownHostException ? "unknown host " + t.getMessage() : text(t);
            String seen = (head + " " + String.join(" ", more)).toLowerCase(Locale.ROOT);
            if (!part.isEmpty() && !seen.contains(part.toLowerCase(Locale.ROOT))) {
                more.add(part);
            }
        }
        String line = more.isEmpty() ? head : stripDot(head) + " (" + String.join("; ", more) + ")";
        return line.replaceAll("\\s*\\R\\s*", " ");
    }

    private static String text(Throwable t) {
        String message = t.getMessage();
        if (message == null || message.isBlank()) {
            return t.getClass().getSimpleName();
        }
        return t instanceof SQLException || t.getClass().getName().startsWith("java.net.") ? message.strip()
                : t.getClass().getSimpleName() + ": " + message.strip();
    }

    private static String stripDot(String s) {
        return s.endsWith(".") ? s.substring(0, s.length() - 1) : s;
    }
}
