package dev.stagger.jdbc;

import dev.stagger.AttemptContext;
import dev.stagger.Classifier;
import dev.stagger.Decision;
import java.sql.SQLException;
import java.sql.SQLNonTransientConnectionException;
import java.sql.SQLRecoverableException;
import java.sql.SQLTransientConnectionException;
import java.sql.SQLTransientException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.function.Predicate;
import org.jspecify.annotations.Nullable;

/**
 * Decides whether a failed database operation is worth running again. A retry only helps when
 * the database says the transaction was rolled back for a reason a new attempt can get past: a
 * deadlock victim, a serialization failure, a lock that was not available, a dropped connection,
 * a server restarting or failing over, a full connection table, a busy SQLite file. A constraint
 * violation, a syntax error, bad data, a statement that ran past its time limit or was cancelled
 * by an operator fails the same way (or was meant to end), so retrying it only adds load.
 *
 * <p>Every {@link SQLException} in the failure is examined: the failure itself, its causes, and
 * each exception's {@link SQLException#getNextException() next exceptions} (drivers chain the
 * real error of a batch there, and PostgreSQL's driver chains the I/O error after a server's
 * farewell). Each exception is decided by the first of these that has an entry for it:
 * <ol>
 *   <li><b>SQLite</b> (sqlite-jdbc's {@code [SQLITE_...]} message or {@code org.sqlite} type):
 *       {@code SQLITE_BUSY} (5) and {@code SQLITE_LOCKED} (6), extended codes included, retry;
 *       every other SQLite code stops;
 *   <li><b>the MySQL/MariaDB error code</b>: retry {@code 1213} (deadlock), {@code 1205} (lock
 *       wait timeout), {@code 1020} (record changed since last read), {@code 3572} (lock
 *       {@code NOWAIT}), {@code 1040} and {@code 1203} (too many connections), {@code 2006} and
 *       {@code 2013} (server gone away, connection lost), {@code 4031} (disconnected for
 *       inactivity), {@code 1053} (server shutdown); stop {@code 1317} (query interrupted),
 *       {@code 1927} (connection killed), {@code 1969} and {@code 3024} (statement time limit),
 *       {@code 1226} (per-account limit). The code beats the SQLState: {@code 1203} arrives as
 *       {@code 42000};
 *   <li><b>the SQLState</b>: retry {@code 40001}, {@code 40P01}, {@code 55P03}, {@code 53300},
 *       {@code 57P01}, {@code 57P02}, {@code 57P03}, {@code 57P05}; stop {@code 08007}
 *       (transaction resolution unknown: it may have committed), {@code 08P01}, {@code 40002},
 *       {@code 40003}, {@code 25P03}, {@code 53000}, {@code 53100}, {@code 53200}, {@code 53400},
 *       {@code 57014}, {@code 57P04}, {@code 70100}, {@code 72000}; then by class: retry class
 *       {@code 08} (connection exception), stop classes {@code 22}, {@code 23} and {@code 42};
 *   <li><b>the exception type</b>, only when none of the above has an entry:
 *       {@link SQLTransientException} and its subtypes, {@link SQLRecoverableException} retry.
 *       A driver's {@code SQLTransactionRollbackException} with SQLState {@code 40002} or a
 *       {@code SQLTimeoutException} with {@code 70100} therefore stops: the state is the more
 *       specific statement.
 * </ol>
 * Across the chain: a {@link TransactionOutcomeUnknownException} always stops (the transaction
 * may have committed); otherwise a rule added through the {@link Builder} that says retry wins;
 * otherwise a <em>stop</em> anywhere wins over a <em>retry</em> (when in doubt, do not repeat);
 * otherwise any retry retries; everything else, states and codes in no table and failures that
 * are not {@code SQLException}s at all (a {@code NullPointerException} from the unit of work, an
 * {@link Error}), stops.
 *
 * <p>The error codes are MySQL's and MariaDB's numbers; they are read from any driver, so a
 * driver that uses one of these numbers for something else would be misread (PostgreSQL's driver
 * reports 0, sqlite-jdbc reports SQLite's codes, which it is matched by first).
 *
 * <p>Results are always accepted. Immutable and thread-safe.
 */
public final class SqlClassifier implements Classifier {
    private static final SqlClassifier DEFAULTS = new Builder().build();

    /** One exception's entry in the default table. */
    private enum Verdict { RETRY, STOP, NONE }

    private static final Map<Integer, Verdict> MYSQL_CODES = Map.ofEntries(
            Map.entry(1213, Verdict.RETRY),  // ER_LOCK_DEADLOCK
            Map.entry(1205, Verdict.RETRY),  // ER_LOCK_WAIT_TIMEOUT (MariaDB: also NOWAIT)
            Map.entry(1020, Verdict.RETRY),  // ER_CHECKREAD: record changed since last read
            Map.entry(3572, Verdict.RETRY),  // ER_LOCK_NOWAIT
            Map.entry(1040, Verdict.RETRY),  // ER_CON_COUNT_ERROR: too many connections
            Map.entry(1203, Verdict.RETRY),  // ER_TOO_MANY_USER_CONNECTIONS
            Map.entry(2006, Verdict.RETRY),  // CR_SERVER_GONE_ERROR
            Map.entry(2013, Verdict.RETRY),  // CR_SERVER_LOST
            Map.entry(4031, Verdict.RETRY),  // ER_CLIENT_INTERACTION_TIMEOUT
            Map.entry(1053, Verdict.RETRY),  // ER_SERVER_SHUTDOWN
            Map.entry(1317, Verdict.STOP),   // ER_QUERY_INTERRUPTED: KILL QUERY
            Map.entry(1927, Verdict.STOP),   // ER_CONNECTION_KILLED
            Map.entry(1969, Verdict.STOP),   // ER_STATEMENT_TIMEOUT: max_statement_time
            Map.entry(3024, Verdict.STOP),   // ER_QUERY_TIMEOUT: max_execution_time
            Map.entry(1226, Verdict.STOP));  // ER_USER_LIMIT_REACHED: per-account, some hourly

    private static final Map<String, Verdict> STATES = Map.ofEntries(
            Map.entry("40001", Verdict.RETRY), // serialization_failure
            Map.entry("40P01", Verdict.RETRY), // deadlock_detected
            Map.entry("55P03", Verdict.RETRY), // lock_not_available
            Map.entry("53300", Verdict.RETRY), // too_many_connections
            Map.entry("57P01", Verdict.RETRY), // admin_shutdown
            Map.entry("57P02", Verdict.RETRY), // crash_shutdown
            Map.entry("57P03", Verdict.RETRY), // cannot_connect_now
            Map.entry("57P05", Verdict.RETRY), // idle_session_timeout
            Map.entry("08007", Verdict.STOP),  // transaction_resolution_unknown
            Map.entry("08P01", Verdict.STOP),  // protocol_violation
            Map.entry("40002", Verdict.STOP),  // transaction_integrity_constraint_violation
            Map.entry("40003", Verdict.STOP),  // statement_completion_unknown
            Map.entry("25P03", Verdict.STOP),  // idle_in_transaction_session_timeout
            Map.entry("53000", Verdict.STOP),  // insufficient_resources
            Map.entry("53100", Verdict.STOP),  // disk_full
            Map.entry("53200", Verdict.STOP),  // out_of_memory
            Map.entry("53400", Verdict.STOP),  // configuration_limit_exceeded
            Map.entry("57014", Verdict.STOP),  // query_canceled
            Map.entry("57P04", Verdict.STOP),  // database_dropped
            Map.entry("70100", Verdict.STOP),  // MySQL/MariaDB: query or connection interrupted
            Map.entry("72000", Verdict.STOP)); // snapshot_too_old

    /** Besides class 08: the server ended the session (shutdown, crash, idle session). */
    private static final Set<String> SESSION_ENDED_STATES = Set.of("57P01", "57P02", "57P05");
    /** Server gone away, connection lost, idle timeout, server shutdown, connection killed. */
    private static final Set<Integer> SESSION_ENDED_CODES = Set.of(2006, 2013, 4031, 1053, 1927);

    private final Set<String> extraStates;
    private final Set<Integer> extraCodes;
    private final List<Predicate<? super SQLException>> extraRules;

    private SqlClassifier(Builder b) {
        this.extraStates = Set.copyOf(b.states);
        this.extraCodes = Set.copyOf(b.codes);
        this.extraRules = List.copyOf(b.rules);
    }

    /** The table above, with nothing added. */
    public static SqlClassifier defaults() {
        return DEFAULTS;
    }

    /** Starts from the table above; add vendor states, codes or rules. */
    public static Builder builder() {
        return new Builder();
    }

    @Override
    public Decision classify(@Nullable Object result, @Nullable Throwable failure, AttemptContext context) {
        if (failure == null) {
            return Decision.accept();
        }
        return isRetryable(failure) ? Decision.retry() : Decision.stop();
    }

    /** True when {@code failure} (anything in its chain) is worth retrying; see the class comment. */
    public boolean isRetryable(Throwable failure) {
        boolean retry = false;
        boolean stop = false;
        for (SQLException e : sqlExceptionsIn(failure)) {
            if (e instanceof TransactionOutcomeUnknownException) {
                return false;
            }
            if (matchesAddedRule(e)) {
                return true;
            }
            Verdict v = defaultVerdict(e);
            if (v == Verdict.STOP) {
                stop = true;
            } else if (v == Verdict.RETRY) {
                retry = true;
            }
        }
        return retry && !stop;
    }

    /**
     * True when {@code failure} says the connection is gone: a connection-class exception type,
     * SQLState class {@code 08}, PostgreSQL's {@code 57P01}, {@code 57P02} and {@code 57P05}
     * (the server ended the session), MySQL/MariaDB {@code 2006}, {@code 2013}, {@code 4031},
     * {@code 1053} and {@code 1927}. {@link Transactions} reads such a failure of
     * {@code commit()} as "outcome unknown": the commit may have reached the server.
     */
    static boolean meansConnectionLost(SQLException failure) {
        for (SQLException e : sqlExceptionsIn(failure)) {
            if (e instanceof SQLRecoverableException || e instanceof SQLTransientConnectionException
                    || e instanceof SQLNonTransientConnectionException) {
                return true;
            }
            String state = upper(e.getSQLState());
            if (state != null && (state.startsWith("08") || SESSION_ENDED_STATES.contains(state))) {
                return true;
            }
            if (!isSqlite(e) && SESSION_ENDED_CODES.contains(e.getErrorCode())) {
                return true;
            }
        }
        return false;
    }

    private static Verdict defaultVerdict(SQLException e) {
        if (isSqlite(e)) {
            return isSqliteBusyOrLocked(e) ? Verdict.RETRY : Verdict.STOP;
        }
        Verdict byCode = MYSQL_CODES.getOrDefault(e.getErrorCode(), Verdict.NONE);
        if (byCode != Verdict.NONE) {
            return byCode;
        }
        String state = upper(e.getSQLState());
        if (state != null) {
            Verdict byState = STATES.getOrDefault(state, Verdict.NONE);
            if (byState != Verdict.NONE) {
                return byState;
            }
            if (state.startsWith("08")) {
                return Verdict.RETRY;
            }
            if (state.startsWith("22") || state.startsWith("23") || state.startsWith("42")) {
                return Verdict.STOP;
            }
        }
        if (e instanceof SQLTransientException || e instanceof SQLRecoverableException) {
            return Verdict.RETRY;
        }
        return Verdict.NONE;
    }

    private static @Nullable String upper(@Nullable String state) {
        return state == null ? null : state.toUpperCase(Locale.ROOT);
    }

    private boolean matchesAddedRule(SQLException e) {
        String state = e.getSQLState();
        if (state != null && (extraStates.contains(state.toUpperCase(Locale.ROOT))
                || state.length() >= 2 && extraStates.contains(state.substring(0, 2).toUpperCase(Locale.ROOT)))) {
            return true;
        }
        if (extraCodes.contains(e.getErrorCode())) {
            return true;
        }
        for (Predicate<? super SQLException> rule : extraRules) {
            if (rule.test(e)) {
                return true;
            }
        }
        return false;
    }

    /**
     * sqlite-jdbc names the (extended) result code in brackets at the start of the message, e.g.
     * {@code [SQLITE_BUSY_SNAPSHOT]}, and throws {@code org.sqlite} types.
     */
    private static boolean isSqlite(SQLException e) {
        String message = e.getMessage();
        return message != null && message.startsWith("[SQLITE_") || e.getClass().getName().startsWith("org.sqlite.");
    }

    /** sqlite-jdbc reports the primary result code as the error code; the message names the extended one. */
    private static boolean isSqliteBusyOrLocked(SQLException e) {
        String message = e.getMessage();
        if (message != null && (message.startsWith("[SQLITE_BUSY") || message.startsWith("[SQLITE_LOCKED"))) {
            return true;
        }
        int primary = e.getErrorCode() & 0xff;
        return primary == 5 || primary == 6;
    }

    /** The SQLExceptions of a failure, in order: causes, and each one's next exceptions. */
    private static List<SQLException> sqlExceptionsIn(Throwable failure) {
        List<SQLException> found = new ArrayList<>(2);
        Set<Throwable> seen = Collections.newSetFromMap(new IdentityHashMap<>());
        collect(failure, found, seen, 0);
        return found;
    }

    private static void collect(Throwable t, List<SQLException> found, Set<Throwable> seen, int depth) {
        // bounded: a hostile chain must not turn classification into a long walk
        while (t != null && depth < 64 && seen.add(t)) {
            if (t instanceof SQLException sql) {
                found.add(sql);
                SQLException next = sql.getNextException();
                if (next != null) {
                    collect(next, found, seen, depth + 1);
                }
            }
            t = t.getCause();
            depth++;
        }
    }

    @Override
    public String toString() {
        return "SqlClassifier{extraStates=" + extraStates + ", extraCodes=" + extraCodes
                + ", extraRules=" + extraRules.size() + "}";
    }

    /** Builds a {@link SqlClassifier}: the default table plus vendor additions. Not thread-safe. */
    public static final class Builder {
        private final Set<String> states = new LinkedHashSet<>();
        private final Set<Integer> codes = new LinkedHashSet<>();
        private final List<Predicate<? super SQLException>> rules = new ArrayList<>();

        private Builder() {
        }

        /**
         * Also retry these SQLStates: five characters for one state ({@code "57014"}), or two for
         * a whole class ({@code "HY"}). An added state beats every default stop, {@code 08007}
         * included; never a {@link TransactionOutcomeUnknownException}.
         */
        public Builder retrySqlStates(String... sqlStates) {
            for (String s : sqlStates) {
                if (s == null || !(s.length() == 5 || s.length() == 2)) {
                    throw new IllegalArgumentException(
                            "sqlStates must be 5 characters (a state) or 2 (a class), got '" + s + "'");
                }
                states.add(s.toUpperCase(Locale.ROOT));
            }
            return this;
        }

        /** Also retry these vendor error codes ({@link SQLException#getErrorCode()}); e.g. Oracle's 60. */
        public Builder retryErrorCodes(int... errorCodes) {
            for (int c : errorCodes) {
                if (c == 0) {
                    throw new IllegalArgumentException("errorCodes must not contain 0 (drivers use it for 'none')");
                }
                codes.add(c);
            }
            return this;
        }

        /** Also retry any SQLException in the chain matching {@code rule}; it must be thread-safe. */
        public Builder retryIf(Predicate<? super SQLException> rule) {
            if (rule == null) {
                throw new NullPointerException("rule must not be null");
            }
            rules.add(rule);
            return this;
        }

        public SqlClassifier build() {
            return new SqlClassifier(this);
        }
    }
}
