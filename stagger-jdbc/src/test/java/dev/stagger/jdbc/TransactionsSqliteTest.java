package dev.stagger.jdbc;

import dev.stagger.jdbc.internal.Dialect;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.stagger.AttemptContext;
import dev.stagger.Backoff;
import dev.stagger.EndReason;
import dev.stagger.RandomSource;
import dev.stagger.Retry;
import dev.stagger.RetryEvent;
import dev.stagger.RetryListener;
import dev.stagger.RetryPolicy;
import dev.stagger.testing.VirtualClock;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLRecoverableException;
import java.sql.SQLTransientConnectionException;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

@Timeout(30)
class TransactionsSqliteTest {
    @TempDir
    Path dir;

    private SqliteDataSource db;
    private final RecordingListener listener = new RecordingListener();
    private final ExecutorService pool = Executors.newFixedThreadPool(2);

    @BeforeEach
    void setUp() throws SQLException {
        // no busy timeout: a writer that finds the database locked fails at once with SQLITE_BUSY
        db = SqliteDataSource.file(dir.resolve("tx.db"), Duration.ZERO);
        try (Connection c = db.getConnection(); Statement s = c.createStatement()) {
            s.execute("CREATE TABLE jdbc_items (id INTEGER PRIMARY KEY, name TEXT NOT NULL)");
        }
    }

    @AfterEach
    void tearDown() throws InterruptedException {
        pool.shutdownNow();
        assertThat(pool.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
    }

    private Transactions transactions() {
        return Transactions.builder(db)
                .retry(Retry.of("sqlite", Transactions.defaultPolicy()).withListener(listener))
                .build();
    }

    @Test
    void aWriterThatFindsTheDatabaseBusyIsRetriedUntilTheOtherWriterCommits() throws Exception {
        CountDownLatch firstHoldsTheWriteLock = new CountDownLatch(1);
        CountDownLatch secondWasRefused = new CountDownLatch(1);
        Transactions holder = Transactions.of(db);
        Transactions waiter = Transactions.builder(db)
                .retry(Retry.of("sqlite", Transactions.defaultPolicy()).withListener(listener)
                        .withListener(new RetryListener() {
                            @Override
                            public void onRetryScheduled(RetryEvent.RetryScheduled event) {
                                secondWasRefused.countDown();
                            }
                        }))
                .build();

        Future<?> first = pool.submit(() -> {
            holder.run(c -> {
                insert(c, 1, "first");
                firstHoldsTheWriteLock.countDown();
                assertThat(secondWasRefused.await(10, TimeUnit.SECONDS)).isTrue();
            });
            return null;
        });
        assertThat(firstHoldsTheWriteLock.await(10, TimeUnit.SECONDS)).isTrue();
        Future<?> second = pool.submit(() -> {
            waiter.run(c -> insert(c, 2, "second"));
            return null;
        });

        first.get(10, TimeUnit.SECONDS);
        second.get(10, TimeUnit.SECONDS);
        assertThat(names()).containsExactly("first", "second");
        assertThat(listener.retriedFailures).isNotEmpty()
                .allSatisfy(f -> assertThat(f).isInstanceOf(SQLException.class).hasMessageStartingWith("[SQLITE_BUSY"));
        assertThat(listener.calls).singleElement().extracting(RetryEvent.CallFinished::reason)
                .isEqualTo(EndReason.RECOVERED);
    }

    @Test
    void aReaderWhoseSnapshotWasOvertakenByAnotherWriterIsRetriedFromTheStart() throws Exception {
        Transactions tx = transactions();
        tx.run(c -> insert(c, 1, "seed"));

        String seen = tx.call((Connection c, AttemptContext attempt) -> {
            List<String> before = names(c); // WAL: this read fixes the transaction's snapshot
            if (attempt.attempt() == 1) {
                try (Connection other = db.getConnection()) {
                    insert(other, 2, "other writer");
                }
            }
            insert(c, 3, "after " + before.size());
            return String.join(",", before);
        });

        assertThat(listener.retriedFailures).singleElement()
                .satisfies(f -> assertThat(f).hasMessageStartingWith("[SQLITE_BUSY_SNAPSHOT]"));
        assertThat(seen).isEqualTo("seed,other writer");
        assertThat(names()).containsExactly("seed", "other writer", "after 2");
    }

    @Test
    void aUniqueConstraintViolationIsNotRetried() throws Exception {
        Transactions tx = transactions();
        tx.run(c -> insert(c, 1, "first"));

        assertThatThrownBy(() -> tx.run(c -> insert(c, 1, "duplicate")))
                .isInstanceOf(SQLException.class).hasMessageContaining("SQLITE_CONSTRAINT");
        assertThat(listener.calls).extracting(RetryEvent.CallFinished::reason)
                .containsExactly(EndReason.SUCCESS, EndReason.NOT_RETRYABLE);
        assertThat(listener.attempts.get()).isEqualTo(2); // one per call
        assertThat(names()).containsExactly("first");
    }

    @Test
    void returnsTheResultOfTheCommittedAttempt() throws Exception {
        Transactions tx = transactions();
        long count = tx.call(c -> {
            insert(c, 1, "a");
            insert(c, 2, "b");
            try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery("SELECT count(*) FROM jdbc_items")) {
                rs.next();
                return rs.getLong(1);
            }
        });
        assertThat(count).isEqualTo(2);
        assertThat(names()).containsExactly("a", "b");
    }

    @Test
    void aFailedAttemptLeavesNothingBehindAndTheRetryRunsTheWholeUnitAgain() throws Exception {
        Transactions tx = transactions();
        AtomicInteger runs = new AtomicInteger();

        tx.run(c -> {
            insert(c, runs.incrementAndGet(), "attempt " + runs.get());
            if (runs.get() == 1) {
                throw new SQLException("[SQLITE_BUSY] The database file is locked", null, 5);
            }
        });

        assertThat(runs.get()).isEqualTo(2);
        assertThat(names()).containsExactly("attempt 2");
    }

    @Test
    void everyAttemptGetsAFreshConnectionThatIsAlwaysClosed() {
        TrackingDataSource tracking = new TrackingDataSource(db);
        Transactions tx = Transactions.builder(tracking)
                .retry(Retry.of("sqlite", RetryPolicy.builder().maxAttempts(3).backoff(Backoff.none())
                        .classifier(SqlClassifier.defaults()).build()))
                .build();

        assertThatThrownBy(() -> tx.run(c -> {
            throw new SQLException("database is locked", "40001");
        })).isInstanceOf(SQLException.class);

        assertThat(tracking.opened.get()).isEqualTo(3);
        assertThat(tracking.closed.get()).isEqualTo(3);
    }

    @Test
    void restoresAutoCommitAndIsolationBeforeClosing() throws Exception {
        TrackingDataSource tracking = new TrackingDataSource(db);
        Transactions tx = Transactions.builder(tracking).isolation(Connection.TRANSACTION_READ_UNCOMMITTED).build();

        int seenIsolation = tx.call(c -> {
            assertThat(c.getAutoCommit()).isFalse();
            return c.getTransactionIsolation();
        });
        assertThatThrownBy(() -> tx.run(c -> {
            throw new IllegalStateException("bug in the unit of work");
        })).isInstanceOf(IllegalStateException.class);

        assertThat(seenIsolation).isEqualTo(Connection.TRANSACTION_READ_UNCOMMITTED);
        assertThat(tracking.settingsAtClose).hasSize(2).allSatisfy(s -> {
            assertThat(s.autoCommit()).isTrue();
            assertThat(s.isolation()).isEqualTo(Connection.TRANSACTION_SERIALIZABLE);
        });
    }

    static Stream<SQLException> lostCommits() {
        return Stream.of(
                new SQLException("I/O error: connection reset", "08006"),
                new SQLTransientConnectionException("Communications link failure during commit(). Transaction"
                        + " resolution unknown.", "08007"),
                new SQLException("terminating connection due to administrator command", "57P01"),
                new SQLException("terminating connection because of crash of another server process", "57P02"),
                new SQLException("terminating connection due to idle-session timeout", "57P05"),
                new SQLException("MySQL server has gone away", "HY000", 2006),
                new SQLException("Lost connection to server during query", "HY000", 2013),
                new SQLException("The client was disconnected by the server because of inactivity", "HY000", 4031),
                new SQLException("Connection was killed", "70100", 1927),
                new SQLRecoverableException("connection reset"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("lostCommits")
    void aLostConnectionDuringCommitIsReportedAsOutcomeUnknownAndNotRetried(SQLException lost) throws Exception {
        TrackingDataSource tracking = new TrackingDataSource(db);
        tracking.failCommitsAfterCommitting(1, lost);
        Transactions tx = Transactions.builder(tracking)
                .retry(Retry.of("sqlite", Transactions.defaultPolicy()).withListener(listener))
                .build();

        assertThatThrownBy(() -> tx.run(c -> insert(c, 1, "committed after all")))
                .isInstanceOf(TransactionOutcomeUnknownException.class)
                .hasCauseInstanceOf(SQLException.class);

        assertThat(listener.attempts.get()).isEqualTo(1);
        assertThat(names()).containsExactly("committed after all");
    }

    @Test
    void aConnectionLostBeforeCommitIsRetriedAndTheWholeUnitRunsOnceToCommit() throws Exception {
        Transactions tx = transactions();
        AtomicInteger runs = new AtomicInteger();

        tx.run(c -> {
            insert(c, 1, "run " + runs.incrementAndGet());
            if (runs.get() == 1) {
                throw new SQLException("Lost connection to server during query", "HY000", 2013);
            }
        });

        assertThat(listener.retriedStates()).containsExactly("HY000");
        assertThat(names()).containsExactly("run 2");
    }

    @Test
    void anIdempotentUnitOfWorkMayRetryALostCommit() throws Exception {
        TrackingDataSource tracking = new TrackingDataSource(db);
        tracking.failCommitsAfterCommitting(1, new SQLException("I/O error: connection reset", "08006"));
        Transactions tx = Transactions.builder(tracking)
                .retry(Retry.of("sqlite", Transactions.defaultPolicy()).withListener(listener))
                .retryWhenCommitOutcomeUnknown(true)
                .build();
        String sql = Dialect.SQLITE.insertIfAbsent("jdbc_items", List.of("id", "name"), List.of("id"));

        tx.run(c -> {
            try (PreparedStatement ps = c.prepareStatement(sql)) {
                ps.setInt(1, 1);
                ps.setString(2, "once");
                ps.executeUpdate();
            }
        });

        assertThat(listener.attempts.get()).isEqualTo(2);
        assertThat(names()).containsExactly("once");
    }

    @Test
    void waitsBetweenAttemptsOnTheRetrysClockWithTheDefaultContentionSchedule() throws Exception {
        VirtualClock clock = new VirtualClock();
        Transactions tx = Transactions.builder(db)
                .retry(Retry.of("sqlite", Transactions.defaultPolicy()).withClock(clock)
                        .withRandom(RandomSource.sequence(0.999_999)))
                .build();

        assertThatThrownBy(() -> tx.run(c -> {
            throw new SQLException("deadlock detected", "40P01");
        })).isInstanceOf(SQLException.class);

        // with the jitter draw pinned just under 1: just under 5, 10, 20, ... ms, capped at 1 s
        assertThat(clock.sleeps()).extracting(Duration::toMillis)
                .containsExactly(4L, 9L, 19L, 39L, 79L, 159L, 319L, 639L, 999L);
    }

    @Test
    void aUnitOfWorkCanBoundItsStatementsByTheAttemptTimeoutRoundedUpToWholeSeconds() throws Exception {
        Transactions tx = Transactions.builder(db)
                .retry(Retry.of("sqlite", Transactions.defaultPolicy().toBuilder()
                        .attemptTimeout(Duration.ofMillis(1500)).build()))
                .build();

        int seconds = tx.call((Connection c, AttemptContext attempt) -> {
            try (Statement s = c.createStatement()) {
                Transactions.applyQueryTimeout(s, attempt);
                return s.getQueryTimeout();
            }
        });
        assertThat(seconds).isEqualTo(2);
    }

    @Test
    void withoutAnAttemptTimeoutTheRemainingDeadlineBoundsTheStatements() throws Exception {
        Transactions tx = Transactions.builder(db)
                .retry(Retry.of("sqlite", Transactions.defaultPolicy().toBuilder()
                        .deadline(Duration.ofSeconds(30)).build()).withClock(new VirtualClock()))
                .build();

        int seconds = tx.call((Connection c, AttemptContext attempt) -> {
            try (Statement s = c.createStatement()) {
                Transactions.applyQueryTimeout(s, attempt);
                return s.getQueryTimeout();
            }
        });
        assertThat(seconds).isEqualTo(30);
    }

    @Test
    void withNoTimeLimitTheStatementIsLeftAlone() throws Exception {
        int seconds = transactions().call((Connection c, AttemptContext attempt) -> {
            try (Statement s = c.createStatement()) {
                Transactions.applyQueryTimeout(s, attempt);
                return s.getQueryTimeout();
            }
        });
        assertThat(seconds).isZero();
    }

    @Test
    void anInterruptedExceptionFromTheUnitOfWorkIsNotRetried() {
        Transactions tx = transactions();
        assertThatThrownBy(() -> tx.run(c -> {
            throw new InterruptedException();
        })).isInstanceOf(InterruptedException.class);
        assertThat(listener.attempts.get()).isEqualTo(1);
    }

    @Test
    void rejectsInvalidConfigurationNamingTheField() {
        assertThatThrownBy(() -> Transactions.builder(null))
                .isInstanceOf(NullPointerException.class).hasMessageContaining("dataSource");
        assertThatThrownBy(() -> Transactions.builder(db).isolation(Connection.TRANSACTION_NONE))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("isolation").hasMessageContaining("0");
        assertThatThrownBy(() -> Transactions.builder(db).isolation(3))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("isolation").hasMessageContaining("3");
        assertThatThrownBy(() -> Transactions.builder(db).retry(null))
                .isInstanceOf(NullPointerException.class).hasMessageContaining("retry");
    }

    private static void insert(Connection c, int id, String name) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("INSERT INTO jdbc_items (id, name) VALUES (?, ?)")) {
            ps.setInt(1, id);
            ps.setString(2, name);
            ps.executeUpdate();
        }
    }

    private List<String> names() throws SQLException {
        try (Connection c = db.getConnection()) {
            return names(c);
        }
    }

    private static List<String> names(Connection c) throws SQLException {
        List<String> names = new java.util.ArrayList<>();
        try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery("SELECT name FROM jdbc_items ORDER BY id")) {
            while (rs.next()) {
                names.add(rs.getString(1));
            }
        }
        return names;
    }
}
