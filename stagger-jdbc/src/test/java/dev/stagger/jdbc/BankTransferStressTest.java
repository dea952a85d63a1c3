package dev.stagger.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.stagger.Retry;
import dev.stagger.testsupport.jdbc.TestDatabases;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Random transfers between a few accounts from several threads under SERIALIZABLE: the database
 * aborts conflicting transactions with 40001 and {@link Transactions} runs them again. Each
 * transfer reads both balances and writes absolute values, so a lost update or a transfer applied
 * twice would show in the balances; the ledger's primary key on the transfer id makes a double
 * application fail outright.
 */
@Timeout(60)
class BankTransferStressTest {
    /** Suffix of this run's table names: other builds on the machine use the same database at once. */
    private static final String RUN = "_" + UUID.randomUUID().toString().substring(0, 8);
    private static final int ACCOUNTS = 20;
    private static final int THREADS = 8;
    private static final int TRANSFERS_PER_THREAD = 260;
    private static final long INITIAL_BALANCE = 1_000;

    @Test
    void randomSerializableTransfersKeepTheTotalAndApplyEachTransferExactlyOnce() throws Exception {
        HikariConfig config = new HikariConfig();
        config.setDataSource(TestDatabases.postgres());
        config.setMaximumPoolSize(THREADS);
        config.setPoolName("jdbc-bank");
        try (HikariDataSource db = new HikariDataSource(config)) {
            try {
                transferAndCheck(db);
            } finally {
                try (Connection c = db.getConnection(); Statement s = c.createStatement()) {
                    s.execute("DROP TABLE IF EXISTS jdbc_bank_ledger" + RUN);
                    s.execute("DROP TABLE IF EXISTS jdbc_bank_accounts" + RUN);
                }
            }
        }
    }

    private void transferAndCheck(DataSource db) throws Exception {
        createAccounts(db);
        RecordingListener listener = new RecordingListener();
        Transactions tx = Transactions.builder(db)
                // the default's shape with more attempts: about a quarter of the attempts conflict, more on a loaded
                // machine, and a transfer giving up after 10 unlucky tries would fail the run without any bug
                .retry(Retry.of("transfer", Transactions.defaultPolicy().toBuilder().maxAttempts(30).build())
                        // every transfer must complete, and a third as many retries as successes is
                        // this run's normal: more than the default budget's 10 % allows
                        .withoutBudget()
                        .withListener(listener))
                .isolation(Connection.TRANSACTION_SERIALIZABLE)
                .build();

        ExecutorService pool = Executors.newFixedThreadPool(THREADS);
        List<Future<?>> workers = new ArrayList<>();
        for (int t = 0; t < THREADS; t++) {
            int thread = t;
            workers.add(pool.submit(() -> {
                Random random = new Random(thread);
                for (int i = 0; i < TRANSFERS_PER_THREAD; i++) {
                    long id = (long) thread * TRANSFERS_PER_THREAD + i;
                    int from = random.nextInt(ACCOUNTS);
                    int to = (from + 1 + random.nextInt(ACCOUNTS - 1)) % ACCOUNTS;
                    long amount = 1 + random.nextInt(50);
                    tx.run(c -> transfer(c, id, from, to, amount));
                }
                return null;
            }));
        }
        pool.shutdown();
        for (Future<?> worker : workers) {
            worker.get(50, TimeUnit.SECONDS);
        }

        int transfers = THREADS * TRANSFERS_PER_THREAD;
        assertThat(queryLong(db, "SELECT sum(balance) FROM jdbc_bank_accounts" + RUN)).isEqualTo(ACCOUNTS * INITIAL_BALANCE);
        assertThat(queryLong(db, "SELECT count(*) FROM jdbc_bank_ledger" + RUN)).isEqualTo(transfers);
        assertThat(balances(db)).isEqualTo(balancesReplayedFromTheLedger(db));
        assertThat(listener.calls).hasSize(transfers).allMatch(call -> call.reason().isSuccess());
        assertThat(listener.retries.get()).as("retries exercised").isPositive();
        // serialization failures, and now and then a deadlock between two transfers touching the same pair
        assertThat(listener.retriedStates()).contains("40001").isSubsetOf("40001", "40P01");
        System.out.printf("%d transfers, %d retries, %d attempts%n", transfers, listener.retries.get(),
                listener.attempts.get());
    }

    private static void transfer(Connection c, long id, int from, int to, long amount) throws SQLException {
        try (PreparedStatement ledger = c.prepareStatement(
                "INSERT INTO jdbc_bank_ledger" + RUN + " (transfer_id, from_account, to_account, amount) VALUES (?, ?, ?, ?)")) {
            ledger.setLong(1, id);
            ledger.setInt(2, from);
            ledger.setInt(3, to);
            ledger.setLong(4, amount);
            ledger.executeUpdate();
        }
        setBalance(c, from, balance(c, from) - amount);
        setBalance(c, to, balance(c, to) + amount);
    }

    private static long balance(Connection c, int account) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT balance FROM jdbc_bank_accounts" + RUN + " WHERE id = ?")) {
            ps.setInt(1, account);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getLong(1);
            }
        }
    }

    private static void setBalance(Connection c, int account, long balance) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("UPDATE jdbc_bank_accounts" + RUN + " SET balance = ? WHERE id = ?")) {
            ps.setLong(1, balance);
            ps.setInt(2, account);
            ps.executeUpdate();
        }
    }

    private static void createAccounts(DataSource db) throws SQLException {
        try (Connection c = db.getConnection(); Statement s = c.createStatement()) {
            s.execute("DROP TABLE IF EXISTS jdbc_bank_ledger" + RUN);
            s.execute("DROP TABLE IF EXISTS jdbc_bank_accounts" + RUN);
            s.execute("CREATE TABLE jdbc_bank_accounts" + RUN + " (id INT PRIMARY KEY, balance BIGINT NOT NULL)");
            s.execute("CREATE TABLE jdbc_bank_ledger" + RUN + " (transfer_id BIGINT PRIMARY KEY,"
                    + " from_account INT NOT NULL, to_account INT NOT NULL, amount BIGINT NOT NULL)");
            s.execute("INSERT INTO jdbc_bank_accounts" + RUN + " SELECT g, " + INITIAL_BALANCE
                    + " FROM generate_series(0, " + (ACCOUNTS - 1) + ") g");
        }
    }

    private static Map<Integer, Long> balances(DataSource db) throws SQLException {
        Map<Integer, Long> balances = new HashMap<>();
        try (Connection c = db.getConnection(); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT id, balance FROM jdbc_bank_accounts" + RUN)) {
            while (rs.next()) {
                balances.put(rs.getInt(1), rs.getLong(2));
            }
        }
        return balances;
    }

    private static Map<Integer, Long> balancesReplayedFromTheLedger(DataSource db) throws SQLException {
        Map<Integer, Long> balances = new HashMap<>();
        for (int a = 0; a < ACCOUNTS; a++) {
            balances.put(a, INITIAL_BALANCE);
        }
        try (Connection c = db.getConnection(); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT from_account, to_account, amount FROM jdbc_bank_ledger" + RUN)) {
            while (rs.next()) {
                balances.merge(rs.getInt(1), -rs.getLong(3), Long::sum);
                balances.merge(rs.getInt(2), rs.getLong(3), Long::sum);
            }
        }
        return balances;
    }

    private static long queryLong(DataSource db, String sql) throws SQLException {
        try (Connection c = db.getConnection(); Statement s = c.createStatement(); ResultSet rs = s.executeQuery(sql)) {
            rs.next();
            return rs.getLong(1);
        }
    }
}
