package dev.stagger.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.stagger.AttemptContext;
import dev.stagger.Backoff;
import dev.stagger.EndReason;
import dev.stagger.Retry;
import dev.stagger.RetryPolicy;
import dev.stagger.jdbc.internal.SimpleDataSource;
import dev.stagger.testsupport.Await;
import dev.stagger.testsupport.jdbc.TestDatabases;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(60)
class TransactionsPostgresTest {
    /** Suffix of this run's table names: other builds on the machine use the same database at once. */
    private static final String RUN = "_" + UUID.randomUUID().toString().substring(0, 8);
    private DataSource db;
    private final RecordingListener listener = new RecordingListener();
    private ExecutorService pool;

    @BeforeEach
    void setUp() throws SQLException {
        db = TestDatabases.postgres();
        pool = Executors.newFixedThreadPool(2);
        exec("DROP TABLE IF EXISTS jdbc_tx_rows" + RUN);
        exec("CREATE TABLE jdbc_tx_rows" + RUN + " (id INT PRIMARY KEY, v INT NOT NULL)");
        exec("INSERT INTO jdbc_tx_rows" + RUN + " VALUES (1, 0), (2, 0)");
        exec("DROP TABLE IF EXISTS jdbc_tx_oncall" + RUN);
        exec("CREATE TABLE jdbc_tx_oncall" + RUN + " (doctor TEXT PRIMARY KEY, on_call BOOLEAN NOT NULL)");
        exec("INSERT INTO jdbc_tx_oncall" + RUN + " VALUES ('alice', true), ('bob', true)");
    }

    @AfterEach
    void tearDown() throws Exception {
        pool.shutdownNow();
        assertThat(pool.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
        exec("DROP TABLE IF EXISTS jdbc_tx_rows" + RUN);
        exec("DROP TABLE IF EXISTS jdbc_tx_oncall" + RUN);
    }

    private Transactions transactions(int isolation) {
        return Transactions.builder(db)
                .retry(Retry.of("pg", Transactions.defaultPolicy()).withListener(listener))
                .isolation(isolation)
                .build();
    }

    @Test
    void twoTransactionsLockingRowsInOppositeOrderBothCompleteAfterADeadlock() throws Exception {
        Transactions tx = transactions(Connection.TRANSACTION_READ_COMMITTED);
        CyclicBarrier bothHoldOneRow = new CyclicBarrier(2);

        Future<Integer> first = pool.submit(() -> tx.call((Connection c, AttemptContext attempt) ->
                lockInOrder(c, attempt.attempt(), bothHoldOneRow, 1, 2)));
        Future<Integer> second = pool.submit(() -> tx.call((Connection c, AttemptContext attempt) ->
                lockInOrder(c, attempt.attempt(), bothHoldOneRow, 2, 1)));

        List<Integer> committedOnAttempt = List.of(first.get(30, TimeUnit.SECONDS), second.get(30, TimeUnit.SECONDS));
        assertThat(committedOnAttempt).containsExactlyInAnyOrder(1, 2);
        assertThat(listener.retriedStates()).containsExactly("40P01");
        assertThat(query("SELECT v FROM jdbc_tx_rows" + RUN + " WHERE id = 1")).isEqualTo(2);
        assertThat(query("SELECT v FROM jdbc_tx_rows" + RUN + " WHERE id = 2")).isEqualTo(2);
        assertThat(listener.calls).extracting(e -> e.reason())
                .containsExactlyInAnyOrder(EndReason.SUCCESS, EndReason.RECOVERED);
    }

    /**
     * Updates row {@code a}, waits (first attempt only) until the other side holds its row, then
     * row {@code b}; returns the attempt that ran.
     */
    private static int lockInOrder(Connection c, int attempt, CyclicBarrier barrier, int a, int b) throws Exception {
        try (Statement s = c.createStatement()) {
            s.execute("SET LOCAL deadlock_timeout = '50ms'");
        }
        increment(c, a);
        if (attempt == 1) {
            barrier.await(10, TimeUnit.SECONDS);
        }
        increment(c, b);
        return attempt;
    }

    private static void increment(Connection c, int id) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("UPDATE jdbc_tx_rows" + RUN + " SET v = v + 1 WHERE id = ?")) {
            ps.setInt(1, id);
            assertThat(ps.executeUpdate()).isEqualTo(1);
        }
    }

    @Test
    void serializableWriteSkewIsRetriedToACorrectResult() throws Exception {
        Transactions tx = transactions(Connection.TRANSACTION_SERIALIZABLE);
        CyclicBarrier bothHaveCounted = new CyclicBarrier(2);

        Future<Boolean> alice = pool.submit(() -> tx.call((Connection c, AttemptContext attempt) ->
                goOffCallIfSomeoneElseIsOn(c, "alice", attempt.attempt() == 1 ? bothHaveCounted : null)));
        Future<Boolean> bob = pool.submit(() -> tx.call((Connection c, AttemptContext attempt) ->
                goOffCallIfSomeoneElseIsOn(c, "bob", attempt.attempt() == 1 ? bothHaveCounted : null)));

        List<Boolean> wentOff = List.of(alice.get(30, TimeUnit.SECONDS), bob.get(30, TimeUnit.SECONDS));
        assertThat(wentOff).containsExactlyInAnyOrder(true, false);
        assertThat(query("SELECT count(*) FROM jdbc_tx_oncall" + RUN + " WHERE on_call")).isEqualTo(1);
        assertThat(listener.retriedStates()).containsExactly("40001");
    }

    /** The classic write skew: each doctor may leave only while another is on call. */
    private static boolean goOffCallIfSomeoneElseIsOn(Connection c, String doctor, CyclicBarrier barrier)
            throws Exception {
        int onCall;
        try (Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT count(*) FROM jdbc_tx_oncall" + RUN + " WHERE on_call")) {
            rs.next();
            onCall = rs.getInt(1);
        }
        if (barrier != null) {
            barrier.await(10, TimeUnit.SECONDS);
        }
        if (onCall < 2) {
            return false;
        }
        try (PreparedStatement ps = c.prepareStatement("UPDATE jdbc_tx_oncall" + RUN + " SET on_call = false WHERE doctor = ?")) {
            ps.setString(1, doctor);
            ps.executeUpdate();
        }
        return true;
    }

    @Test
    void aConstraintViolationIsNotRetriedAndItsTransactionIsRolledBack() {
        Transactions tx = transactions(Connection.TRANSACTION_READ_COMMITTED);

        assertThatThrownBy(() -> tx.run(c -> {
            try (Statement s = c.createStatement()) {
                s.executeUpdate("UPDATE jdbc_tx_rows" + RUN + " SET v = 42 WHERE id = 1");
                s.executeUpdate("INSERT INTO jdbc_tx_rows" + RUN + " VALUES (2, 0)");
            }
        })).isInstanceOf(SQLException.class).extracting(e -> ((SQLException) e).getSQLState()).isEqualTo("23505");

        assertThat(listener.attempts.get()).isEqualTo(1);
        assertThat(query("SELECT v FROM jdbc_tx_rows" + RUN + " WHERE id = 1")).isZero();
    }

    @Test
    void setsTheIsolationLevelAndReadOnlyFlagForTheTransaction() throws Exception {
        Transactions tx = Transactions.builder(db)
                .isolation(Connection.TRANSACTION_REPEATABLE_READ).readOnly(true).build();

        String seen = tx.call(c -> {
            try (Statement s = c.createStatement();
                 ResultSet rs = s.executeQuery("SELECT current_setting('transaction_isolation') || ' '"
                         + " || current_setting('transaction_read_only')")) {
                rs.next();
                return rs.getString(1);
            }
        });
        assertThat(seen).isEqualTo("repeatable read on");
    }

    @Test
    void handsTheConnectionBackWithItsOwnAutoCommitIsolationAndReadOnlySettings() throws Exception {
        TrackingDataSource tracking = new TrackingDataSource(db);
        Transactions tx = Transactions.builder(tracking)
                .isolation(Connection.TRANSACTION_SERIALIZABLE).readOnly(true).build();

        tx.call(c -> query(c, "SELECT 1"));
        assertThatThrownBy(() -> tx.run(c -> query(c, "SELECT 1 / 0"))).isInstanceOf(SQLException.class);

        assertThat(tracking.settingsAtClose).hasSize(2).allSatisfy(s -> assertThat(s)
                .isEqualTo(new TrackingDataSource.Settings(true, Connection.TRANSACTION_READ_COMMITTED, false)));
        assertThat(tracking.closed.get()).isEqualTo(tracking.opened.get());
    }

    @Test
    void aReadOnlyTransactionCannotWrite() {
        Transactions tx = Transactions.builder(db).readOnly(true).build();

        assertThatThrownBy(() -> tx.run(c -> {
            try (Statement s = c.createStatement()) {
                s.executeUpdate("UPDATE jdbc_tx_rows" + RUN + " SET v = 1");
            }
        })).isInstanceOf(SQLException.class).extracting(e -> ((SQLException) e).getSQLState()).isEqualTo("25006");
    }

    @Test
    void anAttemptTimeoutBoundsEveryStatementOfTheTransaction() {
        Transactions tx = Transactions.builder(db)
                .retry(Retry.of("pg", Transactions.defaultPolicy().toBuilder().maxAttempts(1)
                        .attemptTimeout(Duration.ofMillis(200)).build()))
                .build();

        long start = System.nanoTime();
        assertThatThrownBy(() -> tx.run(c -> {
            try (Statement s = c.createStatement()) {
                s.execute("SELECT pg_sleep(5)");
            }
        })).isInstanceOf(SQLException.class).extracting(e -> ((SQLException) e).getSQLState()).isEqualTo("57014");
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(4));
    }

    @Test
    void aPooledConnectionClosedByTheIdleSessionTimeoutIsRetriedOnAFreshOne() throws Exception {
        // what a pool hands out after the server ended the idle session: the first use fails with 57P05
        DataSource agedFirst = new SimpleDataSource() {
            private final AtomicInteger handedOut = new AtomicInteger();

            @Override
            public Connection getConnection() throws SQLException {
                Connection c = db.getConnection();
                if (handedOut.incrementAndGet() == 1) {
                    try (Statement s = c.createStatement()) {
                        s.execute("SET idle_session_timeout = '50ms'");
                    }
                    waitUntilTheServerClosed(c);
                }
                return c;
            }
        };
        Transactions tx = Transactions.builder(agedFirst)
                .retry(Retry.of("pg", Transactions.defaultPolicy()).withListener(listener))
                .build();

        tx.run(c -> increment(c, 1));

        assertThat(listener.retriedStates()).containsExactly("57P05");
        assertThat(query("SELECT v FROM jdbc_tx_rows" + RUN + " WHERE id = 1")).isEqualTo(1);
    }

    /** Polls the server's view of the session (from another connection) until it is gone. */
    private void waitUntilTheServerClosed(Connection c) throws SQLException {
        int pid = c.unwrap(org.postgresql.PGConnection.class).getBackendPID();
        Await.until("the idle session to end", () -> query("SELECT count(*) FROM pg_stat_activity WHERE pid = " + pid) == 0);
    }

    @Test
    void aSessionTerminatedByAnAdministratorIsRetried() throws Exception {
        Transactions tx = transactions(Connection.TRANSACTION_READ_COMMITTED);

        tx.call((Connection c, AttemptContext attempt) -> {
            increment(c, 1);
            if (attempt.attempt() == 1) {
                int pid = c.unwrap(org.postgresql.PGConnection.class).getBackendPID();
                exec("SELECT pg_terminate_backend(" + pid + ")");
                increment(c, 2);
            }
            return null;
        });

        assertThat(listener.retriedStates()).singleElement().isIn("57P01", "08006");
        assertThat(query("SELECT v FROM jdbc_tx_rows" + RUN + " WHERE id = 1")).isEqualTo(1);
        assertThat(query("SELECT v FROM jdbc_tx_rows" + RUN + " WHERE id = 2")).isZero();
    }

    @Test
    void aRowLockedByAnotherTransactionIsRetriedAfterNowaitFails() throws Exception {
        Transactions tx = transactions(Connection.TRANSACTION_READ_COMMITTED);
        try (Connection holder = db.getConnection()) {
            holder.setAutoCommit(false);
            try (Statement s = holder.createStatement()) {
                s.execute("SELECT v FROM jdbc_tx_rows" + RUN + " WHERE id = 1 FOR UPDATE");
            }

            tx.call((Connection c, AttemptContext attempt) -> {
                if (attempt.attempt() == 2) {
                    holder.commit();
                }
                try (Statement s = c.createStatement()) {
                    s.execute("SELECT v FROM jdbc_tx_rows" + RUN + " WHERE id = 1 FOR UPDATE NOWAIT");
                }
                increment(c, 1);
                return null;
            });
        }

        assertThat(listener.retriedStates()).containsExactly("55P03");
        assertThat(query("SELECT v FROM jdbc_tx_rows" + RUN + " WHERE id = 1")).isEqualTo(1);
    }

    @Test
    void aTransactionLeftIdleBeyondIdleInTransactionSessionTimeoutIsNotRetried() {
        Transactions tx = transactions(Connection.TRANSACTION_READ_COMMITTED);

        assertThatThrownBy(() -> tx.run(c -> {
            try (Statement s = c.createStatement()) {
                s.execute("SET LOCAL idle_in_transaction_session_timeout = '50ms'");
            }
            increment(c, 1);
            waitUntilTheServerClosed(c);
            increment(c, 2);
        })).isInstanceOf(SQLException.class).extracting(e -> ((SQLException) e).getSQLState()).isEqualTo("25P03");

        assertThat(listener.attempts.get()).isEqualTo(1);
        assertThat(query("SELECT v FROM jdbc_tx_rows" + RUN + " WHERE id = 1")).isZero();
    }

    @Test
    void aGivenRetryPolicyDecidesTheAttempts() {
        Transactions tx = Transactions.builder(db)
                .retry(Retry.of("pg", RetryPolicy.builder().maxAttempts(3).backoff(Backoff.none())
                        .classifier(SqlClassifier.defaults()).build()).withListener(listener))
                .build();

        assertThatThrownBy(() -> tx.run(c -> {
            throw new SQLException("could not serialize access", "40001");
        })).isInstanceOf(SQLException.class);
        assertThat(listener.attempts.get()).isEqualTo(3);
        assertThat(listener.calls).singleElement().extracting(e -> e.reason()).isEqualTo(EndReason.EXHAUSTED);
    }

    private void exec(String sql) throws SQLException {
        try (Connection c = db.getConnection(); Statement s = c.createStatement()) {
            s.execute(sql);
        }
    }

    private static int query(Connection c, String sql) throws SQLException {
        try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery(sql)) {
            rs.next();
            return rs.getInt(1);
        }
    }

    private int query(String sql) {
        try (Connection c = db.getConnection(); Statement s = c.createStatement(); ResultSet rs = s.executeQuery(sql)) {
            rs.next();
            return rs.getInt(1);
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }
}
