package dev.stagger.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.stagger.AttemptContext;
import dev.stagger.Retry;
import dev.stagger.testsupport.jdbc.TestDatabases;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(60)
class TransactionsMariaDbTest {
    /** Suffix of this run's table names: other builds on the machine use the same database at once. */
    private static final String RUN = "_" + UUID.randomUUID().toString().substring(0, 8);
    private DataSource db;
    private final RecordingListener listener = new RecordingListener();
    private final ExecutorService pool = Executors.newFixedThreadPool(2);

    @BeforeEach
    void setUp() throws SQLException {
        db = TestDatabases.mariadb();
        try (Connection c = db.getConnection(); Statement s = c.createStatement()) {
            s.execute("DROP TABLE IF EXISTS jdbc_tx_rows" + RUN);
            s.execute("CREATE TABLE jdbc_tx_rows" + RUN + " (id INT PRIMARY KEY, v INT NOT NULL) ENGINE=InnoDB");
            s.execute("INSERT INTO jdbc_tx_rows" + RUN + " VALUES (1, 0), (2, 0)");
        }
    }

    @AfterEach
    void tearDown() throws Exception {
        pool.shutdownNow();
        assertThat(pool.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
        try (Connection c = db.getConnection(); Statement s = c.createStatement()) {
            s.execute("DROP TABLE IF EXISTS jdbc_tx_rows" + RUN);
        }
    }

    @Test
    void twoTransactionsLockingRowsInOppositeOrderBothCompleteAfterADeadlock() throws Exception {
        Transactions tx = Transactions.builder(db)
                .retry(Retry.of("mariadb", Transactions.defaultPolicy()).withListener(listener))
                .build();
        CyclicBarrier bothHoldOneRow = new CyclicBarrier(2);

        Future<Integer> first = pool.submit(() -> tx.call((Connection c, AttemptContext attempt) ->
                lockInOrder(c, attempt.attempt(), bothHoldOneRow, 1, 2)));
        Future<Integer> second = pool.submit(() -> tx.call((Connection c, AttemptContext attempt) ->
                lockInOrder(c, attempt.attempt(), bothHoldOneRow, 2, 1)));

        List<Integer> committedOnAttempt = List.of(first.get(30, TimeUnit.SECONDS), second.get(30, TimeUnit.SECONDS));
        assertThat(committedOnAttempt).containsExactlyInAnyOrder(1, 2);
        assertThat(listener.retriedFailures).singleElement()
                .satisfies(f -> assertThat(((SQLException) f).getErrorCode()).isEqualTo(1213));
        assertThat(query("SELECT v FROM jdbc_tx_rows" + RUN + " WHERE id = 1")).isEqualTo(2);
        assertThat(query("SELECT v FROM jdbc_tx_rows" + RUN + " WHERE id = 2")).isEqualTo(2);
    }

    @Test
    void aRecordChangedSinceLastReadUnderRepeatableReadIsRetriedToACorrectResult() throws Exception {
        try (Connection c = db.getConnection(); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SHOW VARIABLES LIKE 'innodb_snapshot_isolation'")) {
            assumeTrue(rs.next(), "this server has no innodb_snapshot_isolation (MariaDB 10.6.18, 10.11.8, 11.4.2"
                    + " and later have it; 11.6.2 turns it on by default)");
        }
        // on by default from MariaDB 11.6.2; set here so that older servers behave the same
        Transactions tx = Transactions.builder(new TrackingDataSource(db, "SET SESSION innodb_snapshot_isolation = ON"))
                .retry(Retry.of("mariadb", Transactions.defaultPolicy()).withListener(listener))
                .isolation(Connection.TRANSACTION_REPEATABLE_READ)
                .build();

        tx.call((Connection c, AttemptContext attempt) -> {
            int v = value(c, 1); // the read view starts here
            if (attempt.attempt() == 1) {
                try (Connection other = db.getConnection(); Statement s = other.createStatement()) {
                    s.executeUpdate("UPDATE jdbc_tx_rows" + RUN + " SET v = 10 WHERE id = 1");
                }
            }
            try (PreparedStatement ps = c.prepareStatement("UPDATE jdbc_tx_rows" + RUN + " SET v = ? WHERE id = 1")) {
                ps.setInt(1, v + 1);
                ps.executeUpdate();
            }
            return null;
        });

        assertThat(listener.retriedFailures).singleElement()
                .satisfies(f -> assertThat(((SQLException) f).getErrorCode()).isEqualTo(1020));
        assertThat(query("SELECT v FROM jdbc_tx_rows" + RUN + " WHERE id = 1")).isEqualTo(11);
    }

    @Test
    void aQueryKilledByAnOperatorIsNotRetried() throws SQLException {
        Transactions tx = Transactions.builder(db)
                .retry(Retry.of("mariadb", Transactions.defaultPolicy()).withListener(listener))
                .build();

        assertThatThrownBy(() -> tx.run(c -> {
            increment(c, 1);
            killFromAnotherConnectionWhileSleeping(c, "KILL QUERY ");
        })).isInstanceOf(SQLException.class)
                .satisfies(e -> assertThat(((SQLException) e).getErrorCode()).isEqualTo(1317));

        assertThat(listener.attempts.get()).isEqualTo(1);
        assertThat(query("SELECT v FROM jdbc_tx_rows" + RUN + " WHERE id = 1")).isZero();
    }

    @Test
    void aConnectionKilledMidTransactionIsRetriedOnAFreshOne() throws Exception {
        Transactions tx = Transactions.builder(db)
                .retry(Retry.of("mariadb", Transactions.defaultPolicy()).withListener(listener))
                .build();

        tx.call((Connection c, AttemptContext attempt) -> {
            increment(c, 1);
            if (attempt.attempt() == 1) {
                killFromAnotherConnectionWhileSleeping(c, "KILL CONNECTION ");
            }
            return null;
        });

        assertThat(listener.retries.get()).isEqualTo(1);
        assertThat(query("SELECT v FROM jdbc_tx_rows" + RUN + " WHERE id = 1")).isEqualTo(1);
    }

    /**
     * Runs {@code SELECT SLEEP(10)} on {@code c} while another connection, once it sees the
     * sleep in the process list, sends {@code kill} with {@code c}'s connection id.
     */
    private void killFromAnotherConnectionWhileSleeping(Connection c, String kill) throws Exception {
        long id = value(c, "SELECT CONNECTION_ID()");
        Future<?> killer = pool.submit(() -> {
            try (Connection other = db.getConnection(); Statement s = other.createStatement()) {
                while (value(other, "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE ID = " + id
                        + " AND INFO LIKE 'SELECT SLEEP%'") == 0) {
                    LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(5));
                }
                s.execute(kill + id);
            }
            return null;
        });
        try (Statement s = c.createStatement()) {
            s.execute("SELECT SLEEP(10)");
        } finally {
            killer.get(10, TimeUnit.SECONDS);
        }
    }

    private static int value(Connection c, int id) throws SQLException {
        return value(c, "SELECT v FROM jdbc_tx_rows" + RUN + " WHERE id = " + id);
    }

    private static int value(Connection c, String sql) throws SQLException {
        try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery(sql)) {
            rs.next();
            return rs.getInt(1);
        }
    }

    /** Updates row {@code a}, waits (first attempt only) for the other side, then row {@code b}. */
    private static int lockInOrder(Connection c, int attempt, CyclicBarrier barrier, int a, int b) throws Exception {
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

    private int query(String sql) throws SQLException {
        try (Connection c = db.getConnection(); Statement s = c.createStatement(); ResultSet rs = s.executeQuery(sql)) {
            rs.next();
            return rs.getInt(1);
        }
    }
}
