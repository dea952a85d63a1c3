package dev.stagger.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import dev.stagger.Decision;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.SQLException;
import java.sql.SQLNonTransientConnectionException;
import java.sql.SQLRecoverableException;
import java.sql.SQLSyntaxErrorException;
import java.sql.SQLTimeoutException;
import java.sql.SQLTransactionRollbackException;
import java.sql.SQLTransientConnectionException;
import java.sql.SQLTransientException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The default table, one row per SQLState or vendor code, with its decision. The README tables
 * list the same rows; a row changed here is changed there.
 */
class SqlClassifierTablesTest {
    private static final SqlClassifier DEFAULTS = SqlClassifier.defaults();

    private static Decision.Kind classify(SQLException e) {
        return DEFAULTS.classify(null, e, null).kind();
    }

    @ParameterizedTest(name = "PostgreSQL {0} ({2}): {1}")
    @CsvSource({
        // class 40, transaction rollback: only the two conflicts a new attempt can win
        "40001, RETRY, serialization_failure",
        "40P01, RETRY, deadlock_detected",
        "40002, STOP,  transaction_integrity_constraint_violation (a deferred constraint failed at commit)",
        "40003, STOP,  statement_completion_unknown (the statement may have taken effect)",
        "40000, STOP,  transaction_rollback without a reason (not in the table: only its exception type can say retry)",
        // class 55
        "55P03, RETRY, lock_not_available (NOWAIT or lock_timeout)",
        "55006, STOP,  object_in_use",
        // class 53, insufficient resources
        "53300, RETRY, too_many_connections",
        "53000, STOP,  insufficient_resources (generic; also raised by extensions for lasting conditions)",
        "53100, STOP,  disk_full",
        "53200, STOP,  out_of_memory (includes out of shared memory for locks)",
        "53400, STOP,  configuration_limit_exceeded",
        // class 57, operator intervention
        "57P01, RETRY, admin_shutdown (also pg_terminate_backend)",
        "57P02, RETRY, crash_shutdown (another backend crashed; the server reinitialises)",
        "57P03, RETRY, cannot_connect_now (starting up; shutting down; standby not accepting connections)",
        "57P05, RETRY, idle_session_timeout (a pooled connection idled past the limit)",
        "57014, STOP,  query_canceled (statement_timeout; pg_cancel_backend; Statement.cancel)",
        "57P04, STOP,  database_dropped",
        "57000, STOP,  operator_intervention",
        // class 25
        "25P03, STOP,  idle_in_transaction_session_timeout (the unit of work paused inside its transaction)",
        "25P02, STOP,  in_failed_sql_transaction (an earlier error was swallowed)",
        "25006, STOP,  read_only_sql_transaction",
        // class 72
        "72000, STOP,  snapshot_too_old (the transaction outlived old_snapshot_threshold)",
        // class 08, connection exception
        "08000, RETRY, connection_exception",
        "08003, RETRY, connection_does_not_exist",
        "08006, RETRY, connection_failure",
        "08001, RETRY, sqlclient_unable_to_establish_sqlconnection",
        "08004, RETRY, sqlserver_rejected_establishment_of_sqlconnection",
        "08007, STOP,  transaction_resolution_unknown (may have committed)",
        "08P01, STOP,  protocol_violation",
        // classes 22, 23, 42: the same every time
        "22001, STOP,  string_data_right_truncation",
        "22012, STOP,  division_by_zero",
        "22P02, STOP,  invalid_text_representation",
        "23505, STOP,  unique_violation",
        "23503, STOP,  foreign_key_violation",
        "23502, STOP,  not_null_violation",
        "23514, STOP,  check_violation",
        "23P01, STOP,  exclusion_violation",
        "42601, STOP,  syntax_error",
        "42P01, STOP,  undefined_table",
        "42501, STOP,  insufficient_privilege",
        // anything else
        "58030, STOP,  io_error (not in the table)",
        "XX000, STOP,  internal_error (not in the table)",
        "40p01, RETRY, a lower-case state is read as upper case",
    })
    void postgresql(String state, Decision.Kind decision, String condition) {
        assertThat(classify(new SQLException(condition, state))).isEqualTo(decision);
    }

    @ParameterizedTest(name = "MySQL/MariaDB {0} (SQLState {1}, {3}): {2}")
    @CsvSource({
        "1213, 40001, RETRY, ER_LOCK_DEADLOCK",
        "1205, HY000, RETRY, ER_LOCK_WAIT_TIMEOUT (MariaDB also for NOWAIT)",
        "1020, HY000, RETRY, ER_CHECKREAD (record changed since last read; REPEATABLE READ with innodb_snapshot_isolation)",
        "3572, HY000, RETRY, ER_LOCK_NOWAIT (MySQL 8.0)",
        "1040, 08004, RETRY, ER_CON_COUNT_ERROR (too many connections)",
        "1203, 42000, RETRY, ER_TOO_MANY_USER_CONNECTIONS (max_user_connections; the code beats class 42)",
        "2006, HY000, RETRY, CR_SERVER_GONE_ERROR",
        "2013, HY000, RETRY, CR_SERVER_LOST (also KILL CONNECTION)",
        "4031, HY000, RETRY, ER_CLIENT_INTERACTION_TIMEOUT (wait_timeout; MySQL 8.0.24)",
        "1053, 08S01, RETRY, ER_SERVER_SHUTDOWN",
        "1317, 70100, STOP,  ER_QUERY_INTERRUPTED (KILL QUERY)",
        "1927, 70100, STOP,  ER_CONNECTION_KILLED",
        "1969, 70100, STOP,  ER_STATEMENT_TIMEOUT (max_statement_time; MariaDB's setQueryTimeout)",
        "3024, HY000, STOP,  ER_QUERY_TIMEOUT (max_execution_time)",
        "1226, 42000, STOP,  ER_USER_LIMIT_REACHED (per-account limits; the hourly ones last up to an hour)",
        "1062, 23000, STOP,  ER_DUP_ENTRY",
        "1452, 23000, STOP,  ER_NO_REFERENCED_ROW_2",
        "1064, 42000, STOP,  ER_PARSE_ERROR",
        "1146, 42S02, STOP,  ER_NO_SUCH_TABLE",
        "1406, 22001, STOP,  ER_DATA_TOO_LONG",
        "1180, HY000, STOP,  ER_ERROR_DURING_COMMIT (not in the table)",
    })
    void mysqlAndMariaDb(int code, String state, Decision.Kind decision, String condition) {
        assertThat(classify(new SQLException(condition, state, code))).isEqualTo(decision);
    }

    @ParameterizedTest(name = "MySQL/MariaDB {0} without a SQLState: {1}")
    @CsvSource({
        "1020, RETRY", "3572, RETRY", "1203, RETRY", "2006, RETRY", "2013, RETRY", "4031, RETRY",
        "1317, STOP", "1969, STOP",
    })
    void mysqlAndMariaDbCodesDecideWithoutAState(int code, Decision.Kind decision) {
        assertThat(classify(new SQLException("vendor error", null, code))).isEqualTo(decision);
    }

    @ParameterizedTest(name = "SQLite {0}: {2}")
    @CsvSource(delimiter = '|', value = {
        "[SQLITE_BUSY] The database file is locked (database is locked)                   | 5   | RETRY",
        "[SQLITE_BUSY_RECOVERY] Another process is recovering a WAL mode database file    | 5   | RETRY",
        "[SQLITE_BUSY_SNAPSHOT] Another database connection has already written          | 5   | RETRY",
        "[SQLITE_BUSY_TIMEOUT] Blocking PosixAdvisoryLock timed out                       | 5   | RETRY",
        "[SQLITE_LOCKED] A table in the database is locked (database table is locked)     | 6   | RETRY",
        "[SQLITE_LOCKED_SHAREDCACHE] Contention with a different database connection      | 6   | RETRY",
        "[SQLITE_LOCKED_VTAB] A virtual table is locked                                   | 6   | RETRY",
        "[SQLITE_CONSTRAINT_UNIQUE] A UNIQUE constraint failed                            | 19  | STOP",
        "[SQLITE_CONSTRAINT_FOREIGNKEY] A foreign key constraint failed                   | 19  | STOP",
        "[SQLITE_ERROR] SQL error or missing database (no such table: t)                  | 1   | STOP",
        "[SQLITE_READONLY] Attempt to write a readonly database                           | 8   | STOP",
        "[SQLITE_IOERR] Some kind of disk I/O error occurred                              | 10  | STOP",
        "[SQLITE_CORRUPT] The database disk image is malformed                            | 11  | STOP",
        "[SQLITE_FULL] Insertion failed because database is full                          | 13  | STOP",
        "[SQLITE_CANTOPEN] Unable to open the database file                               | 14  | STOP",
        "[SQLITE_INTERRUPT] Operation terminated by sqlite3_interrupt()                   | 9   | STOP",
        "[SQLITE_NOMEM] A malloc() failed                                                 | 7   | STOP",
        "[SQLITE_TOOBIG] String or BLOB exceeds size limit                                | 18  | STOP",
    })
    void sqlite(String message, int primaryCode, Decision.Kind decision) {
        assertThat(classify(new SQLException(message, null, primaryCode))).isEqualTo(decision);
    }

    @ParameterizedTest(name = "{0} with SQLState {1} (code {2}): {3}")
    @CsvSource({
        // the SQLState or vendor code decides first; the type only when neither is in the table
        "SQLTransactionRollbackException,  40002, 0,    STOP",
        "SQLTransactionRollbackException,  40003, 0,    STOP",
        "SQLTransactionRollbackException,  40001, 0,    RETRY",
        "SQLTransactionRollbackException,  40000, 0,    RETRY",
        "SQLTransactionRollbackException,  ,      0,    RETRY",
        "SQLTransientConnectionException,  08007, 0,    STOP",
        "SQLTransientConnectionException,  08P01, 0,    STOP",
        "SQLTransientConnectionException,  ,      0,    RETRY",
        "SQLNonTransientConnectionException, 08006, 0,  RETRY",
        "SQLNonTransientConnectionException, 08000, -1, RETRY",
        "SQLNonTransientConnectionException, 08P01, 0,  STOP",
        "SQLRecoverableException,          08P01, 0,    STOP",
        "SQLRecoverableException,          ,      0,    RETRY",
        "SQLTimeoutException,              70100, 1317, STOP",
        "SQLTimeoutException,              70100, 1969, STOP",
        "SQLTimeoutException,              57014, 0,    STOP",
        "SQLTimeoutException,              ,      0,    RETRY",
        "SQLTransientException,            23505, 0,    STOP",
        "SQLSyntaxErrorException,          42000, 1203, RETRY",
        "SQLSyntaxErrorException,          42000, 1064, STOP",
    })
    void theStateAndCodeTablesComeBeforeTheExceptionType(String type, String state, int code, Decision.Kind decision) {
        assertThat(classify(exception(type, state, code))).isEqualTo(decision);
    }

    @Test
    void everyStateAndCodeInTheModuleReadmeTablesIsDecidedAsTheRowSays() throws IOException {
        Pattern state = Pattern.compile("`([0-9A-Z]{5})`");
        Pattern code = Pattern.compile("`(\\d{4})`");
        int checked = 0;
        for (String line : Files.readAllLines(Path.of("README.md"))) { // the module's: tests run in its directory
            String[] cells = line.split("\\|", -1);
            if (!line.startsWith("| `") || cells.length < 5) {
                continue;
            }
            String first = cells[1].trim();
            String second = cells[2].trim();
            if (state.matcher(first).matches()) {
                SQLException e = new SQLException("readme row", first.substring(1, 6));
                assertThat(classify(e)).as(line).isEqualTo(decisionIn(cells[3]));
                checked++;
            } else if (code.matcher(first).matches() && state.matcher(second).matches()) {
                SQLException e = new SQLException("readme row", second.substring(1, 6),
                        Integer.parseInt(first.substring(1, 5)));
                assertThat(classify(e)).as(line).isEqualTo(decisionIn(cells[4]));
                checked++;
            }
        }
        assertThat(checked).as("rows read from the module README").isGreaterThanOrEqualTo(35);
    }

    @Test
    void everyStateAndCodeInTheRootReadmeTableIsDecidedAsItsRowSays() throws IOException {
        String readme = Files.readString(Path.of("..", "README.md"));
        String section = readme.substring(readme.indexOf("## Retrying database transactions"));
        section = section.substring(0, section.indexOf("\n## ", 1));
        Pattern token = Pattern.compile("`(\\d{4}|(?=[0-9A-Z]*\\d)[0-9A-Z]{5})`");
        int checked = 0;
        for (String line : section.split("\n")) {
            String[] cells = line.split("\\|", -1);
            if (!line.startsWith("| ") || cells.length != 4 || !cells[2].trim().matches("\\**(retry|stop)\\**")) {
                continue; // the header, the separator, text around the table
            }
            Decision.Kind decision = decisionIn(cells[2]);
            Matcher m = token.matcher(cells[1]);
            while (m.find()) {
                String t = m.group(1);
                SQLException e = t.length() == 5 ? new SQLException("readme row", t)
                        : new SQLException("readme row", null, Integer.parseInt(t));
                assertThat(classify(e)).as(t + " in " + line).isEqualTo(decision);
                checked++;
            }
        }
        assertThat(checked).as("states and codes read from the root README").isGreaterThanOrEqualTo(35);
    }

    private static Decision.Kind decisionIn(String cell) {
        String c = cell.replace("*", "").trim();
        return switch (c) {
            case "retry" -> Decision.Kind.RETRY;
            case "stop" -> Decision.Kind.STOP;
            default -> throw new AssertionError("a decision cell says retry or stop, not '" + cell + "'");
        };
    }

    private static SQLException exception(String type, String state, int code) {
        return switch (type) {
            case "SQLTransactionRollbackException" -> new SQLTransactionRollbackException("x", state, code);
            case "SQLTransientConnectionException" -> new SQLTransientConnectionException("x", state, code);
            case "SQLNonTransientConnectionException" -> new SQLNonTransientConnectionException("x", state, code);
            case "SQLRecoverableException" -> new SQLRecoverableException("x", state, code);
            case "SQLTimeoutException" -> new SQLTimeoutException("x", state, code);
            case "SQLTransientException" -> new SQLTransientException("x", state, code);
            case "SQLSyntaxErrorException" -> new SQLSyntaxErrorException("x", state, code);
            default -> throw new IllegalArgumentException("type " + type);
        };
    }
}
