package dev.stagger.jdbc;

import dev.stagger.AttemptContext;
import dev.stagger.Classifier;
import dev.stagger.Decision;
import java.sql.SQLException;
import java.sql.SQLRecoverableException;
import java.sql.SQLTransientException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.function.Predicate;

/**
 * Decides whether a failed database operation is worth running again. A retry only helps when
 * the database itself says the conflict or outage was temporary: a deadlock victim, a
 * serialization failure, a lock wait that timed out, a dropped connection, a full connection
 * table, a busy SQLite file. A constraint violation, a syntax error or bad data fails the same
 * way every time, so retrying it only wastes work.
 *
 * <p>Every {@link SQLException} in the failure is examined: the failure itself, its causes, and
 * each exception's {@link SQLException#getNextException() next exceptions} (drivers chain the
 * real error of a batch there). Per exception:
 * <ul>
 *   <li><b>retry</b>: {@link SQLTransientException} and its subtypes (timeouts, transaction
 *       rollbacks, transient connection failures), {@link SQLRecoverableException}; SQLState
 *       {@code 40001} (serialization failure), {@code 40P01} (PostgreSQL deadlock), class
 *       {@code 08} (connection exception), {@code 53300} (too many connections), {@code 57P01}
 *       (administrator shutdown), {@code 55P03} (lock not available); MySQL/MariaDB error codes
 *       {@code 1213} (deadlock) and {@code 1205} (lock wait timeout); SQLite {@code SQLITE_BUSY}
 *       (5) and {@code SQLITE_LOCKED} (6), extended codes included;
 *   <li><b>stop</b>: SQLState classes {@code 22} (data exception), {@code 23} (integrity
 *       constraint violation) and {@code 42} (syntax error or access rule violation).
 * </ul>
 * Across the chain, a rule added through the {@link Builder} that says retry wins; otherwise a
 * <em>stop</em> anywhere wins over a default <em>retry</em> (when in doubt, do not repeat);
 * otherwise any retry match retries; everything else, unknown states and failures that are not
 * {@code SQLException}s at all (a {@code NullPointerException} from the unit of work, an
 * {@link Error}), stops. A {@link TransactionOutcomeUnknownException} always stops: the
 * transaction may have committed.
 *
 * <p>Results are always accepted. Immutable and thread-safe.
 */
public final class SqlClassifier implements Classifier {
    private static final SqlClassifier DEFAULTS = new Builder().build();

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
    public Decision classify(Object result, Throwable failure, AttemptContext context) {
        if (failure == null) {
            return Decision.accept();
        }
        return isRetryable(failure) ? Decision.retry() : Decision.stop();
    }

    /** True when {@code failure} (anything in its chain) is worth retrying; see the class comment. */
    public boolean isRetryable(Throwable failure) {
        boolean defaultRetry = false;
        boolean stop = false;
        for (SQLException e : sqlExceptionsIn(failure)) {
            if (e instanceof TransactionOutcomeUnknownException) {
                return false;
            }
            if (matchesAddedRule(e)) {
                return true;
            }
            if (isPermanent(e)) {
                stop = true;
            } else if (isTransient(e)) {
                defaultRetry = true;
            }
        }
        return defaultRetry && !stop;
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

    private static boolean isPermanent(SQLException e) {
        String state = e.getSQLState();
        return state != null && (state.startsWith("22") || state.startsWith("23") || state.startsWith("42"));
    }

    private static boolean isTransient(SQLException e) {
        if (e instanceof SQLTransientException || e instanceof SQLRecoverableException) {
            return true;
        }
        String state = e.getSQLState();
        if (state != null) {
            String s = state.toUpperCase(Locale.ROOT);
            if (s.startsWith("08") || s.equals("40001") || s.equals("40P01") || s.equals("53300")
                    || s.equals("57P01") || s.equals("55P03")) {
                return true;
            }
        }
        int code = e.getErrorCode();
        if (code == 1213 || code == 1205) {
            return true;
        }
        return isSqliteBusyOrLocked(e);
    }

    /**
     * sqlite-jdbc reports the primary result code as the error code and names the (extended)
     * code in brackets at the start of the message, e.g. {@code [SQLITE_BUSY_SNAPSHOT]}.
     */
    private static boolean isSqliteBusyOrLocked(SQLException e) {
        String message = e.getMessage();
        if (message != null && (message.startsWith("[SQLITE_BUSY") || message.startsWith("[SQLITE_LOCKED"))) {
            return true;
        }
        int primary = e.getErrorCode() & 0xff;
        return (primary == 5 || primary == 6) && e.getClass().getName().startsWith("org.sqlite.");
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
         * a whole class ({@code "HY"}). An added state beats the default stop classes.
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
                throw new IllegalArgumentException("rule must not be null");
            }
            rules.add(rule);
            return this;
        }

        public SqlClassifier build() {
            return new SqlClassifier(this);
        }
    }
}
