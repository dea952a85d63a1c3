package dev.stagger.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import dev.stagger.AttemptContext;
import dev.stagger.Retry;
import dev.stagger.jdbc.testsupport.TestDatabases;
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
