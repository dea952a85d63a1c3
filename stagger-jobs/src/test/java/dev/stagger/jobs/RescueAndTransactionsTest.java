package dev.stagger.jobs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.stagger.RetryPolicy;
import dev.stagger.jdbc.SqliteDataSource;
import dev.stagger.testing.VirtualClock;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicReference;
import javax.sql.DataSource;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Rescue of expired leases and completion inside the handler's own transaction (SQLite). */
class RescueAndTransactionsTest {
    @TempDir
    Path dir;
    VirtualClock clock;
    DataSource ds;
    JobQueue jobs;

    @BeforeEach
    void setUp() throws Exception {
        clock = new VirtualClock();
        ds = SqliteDataSource.file(dir.resolve("jobs.db"));
        jobs = JobQueue.builder(ds).clock(clock).build();
        Stores.exec(ds, "CREATE TABLE receipts (order_id TEXT PRIMARY KEY)");
    }

    /** What a worker that claimed the job and then died leaves behind. */
    private void abandon(long id, int attempt, Duration leaseLeft) throws SQLException {
        try (Connection c = ds.getConnection(); PreparedStatement ps = c.prepareStatement(
                "UPDATE stagger_jobs SET state = 'RUNNING', attempt = ?, locked_by = 'dead-worker', lease_until = ? "
                        + "WHERE id = ?")) {
            ps.setInt(1, attempt);
            ps.setLong(2, clock.currentTimeMillis() + leaseLeft.toMillis());
            ps.setLong(3, id);
            ps.executeUpdate();
        }
    }

    @Test
    void aJobWhoseLeaseExpiredRunsAgainWithTheLostAttemptCounted() throws Exception {
        WorkerPool pool = WorkerPool.builder(jobs, "q").handler("t", ctx -> { }).build();
        long id = jobs.enqueue("q", "t", "x");
        abandon(id, 1, Duration.ofSeconds(30));
        assertThat(pool.runAvailable()).as("the lease still holds").isZero();

        clock.advance(Duration.ofSeconds(31));
        assertThat(pool.runAvailable()).isEqualTo(1);
        Job job = jobs.find(id).orElseThrow();
        assertThat(job.state()).isEqualTo(JobState.SUCCEEDED);
        assertThat(job.attempt()).isEqualTo(2);
        assertThat(jobs.errors(id)).singleElement().satisfies(e -> {
            assertThat(e.exceptionClass()).isEqualTo(JobError.LEASE_EXPIRED);
            assertThat(e.message()).contains("dead-worker");
        });
    }

    @Test
    void aJobThatLostItsLastAttemptToAnExpiredLeaseGoesDead() throws Exception {
        WorkerPool pool = WorkerPool.builder(jobs, "q").handler("t", ctx -> { },
                RetryPolicy.builder().maxAttempts(2).build()).build();
        long id = jobs.enqueue("q", "t", "x");
        abandon(id, 2, Duration.ZERO);
        clock.advance(Duration.ofSeconds(1));
        pool.runAvailable();
        assertThat(jobs.find(id).orElseThrow().state()).isEqualTo(JobState.DEAD);
    }

    @Test
    void completingInTheHandlersTransactionCommitsBusinessWriteAndCompletionTogether() throws Exception {
        WorkerPool pool = WorkerPool.builder(jobs, "orders").handler("receipt", ctx -> {
            try (Connection c = ds.getConnection()) {
                c.setAutoCommit(false);
                try (PreparedStatement ps = c.prepareStatement("INSERT INTO receipts VALUES (?)")) {
                    ps.setString(1, ctx.payloadText());
                    ps.executeUpdate();
                }
                ctx.completeWithin(c);
                c.commit();
            }
        }).build();
        long id = jobs.enqueue("orders", "receipt", "order-7");
        pool.runAvailable();
        assertThat(jobs.find(id).orElseThrow().state()).isEqualTo(JobState.SUCCEEDED);
        assertThat(Stores.count(ds, "SELECT COUNT(*) FROM receipts")).isEqualTo(1);
    }

    @Test
    void aJobCompletedInTheHandlersTransactionIsReportedAsSucceeded() throws Exception {
        List<Long> succeeded = new CopyOnWriteArrayList<>();
        WorkerPool pool = WorkerPool.builder(jobs, "orders").handler("receipt", ctx -> {
            try (Connection c = ds.getConnection()) {
                c.setAutoCommit(false);
                ctx.completeWithin(c);
                c.commit();
            }
        }).listener(new JobListener() {
            @Override
            public void succeeded(Job job, Duration runTime) {
                succeeded.add(job.id());
            }
        }).build();
        long id = jobs.enqueue("orders", "receipt", "order-7");
        pool.runAvailable();
        assertThat(succeeded).containsExactly(id);
    }

    @Test
    void aRolledBackHandlerTransactionLeavesNeitherTheWriteNorTheCompletion() throws Exception {
        WorkerPool pool = WorkerPool.builder(jobs, "orders").handler("receipt", ctx -> {
            try (Connection c = ds.getConnection()) {
                c.setAutoCommit(false);
                try (PreparedStatement ps = c.prepareStatement("INSERT INTO receipts VALUES (?)")) {
                    ps.setString(1, ctx.payloadText());
                    ps.executeUpdate();
                }
                ctx.completeWithin(c);
                c.rollback();
                throw new IllegalStateException("payment provider said no");
            }
        }).build();
        long id = jobs.enqueue("orders", "receipt", "order-7");
        pool.runAvailable();
        Job job = jobs.find(id).orElseThrow();
        assertThat(job.state()).isEqualTo(JobState.AVAILABLE);
        assertThat(job.attempt()).isEqualTo(1);
        assertThat(Stores.count(ds, "SELECT COUNT(*) FROM receipts")).isZero();
    }

    @Test
    void completingAJobWhoseLeaseWasLostThrowsSoTheCallerRollsBack() throws Exception {
        AtomicReference<Throwable> thrown = new AtomicReference<>();
        WorkerPool pool = WorkerPool.builder(jobs, "orders").handler("receipt", ctx -> {
            // meanwhile the lease expired and another worker took the job
            try (Connection other = ds.getConnection(); PreparedStatement ps = other.prepareStatement(
                    "UPDATE stagger_jobs SET locked_by = 'someone-else' WHERE id = ?")) {
                ps.setLong(1, ctx.job().id());
                ps.executeUpdate();
            }
            try (Connection c = ds.getConnection()) {
                c.setAutoCommit(false);
                try {
                    ctx.completeWithin(c);
                } catch (LeaseLostException e) {
                    thrown.set(e);
                    c.rollback();
                    throw e;
                }
            }
        }).build();
        long id = jobs.enqueue("orders", "receipt", "order-7");
        pool.runAvailable();
        assertThat(thrown.get()).isInstanceOf(LeaseLostException.class).hasMessageContaining("job " + id);
        assertThat(jobs.find(id).orElseThrow().state()).isEqualTo(JobState.RUNNING);
        assertThat(jobs.errors(id)).as("the outcome of a lost lease is not stored").isEmpty();
    }

    @Test
    void poolsGivenTheSameNameHoldLeasesUnderDifferentOwnersSoARestartCannotKeepOldLeasesAlive() {
        WorkerPool before = WorkerPool.builder(jobs, "q").workerId("billing-1").handler("t", ctx -> { }).build();
        WorkerPool after = WorkerPool.builder(jobs, "q").workerId("billing-1").handler("t", ctx -> { }).build();
        assertThat(before.workerId()).startsWith("billing-1-");
        assertThat(after.workerId()).startsWith("billing-1-").isNotEqualTo(before.workerId());
    }

    @Test
    void snoozeWithANegativeDelayIsRejected() throws Exception {
        AtomicReference<Throwable> thrown = new AtomicReference<>();
        WorkerPool pool = WorkerPool.builder(jobs, "q").handler("t", ctx -> {
            try {
                ctx.snooze(Duration.ofSeconds(-1));
            } catch (IllegalArgumentException e) {
                thrown.set(e);
            }
        }).build();
        jobs.enqueue("q", "t", "x");
        pool.runAvailable();
        assertThat(thrown.get()).hasMessageContaining("delay must not be negative");
        assertThatThrownBy(() -> pool.shutdown(Duration.ofSeconds(-1))).isInstanceOf(IllegalArgumentException.class);
    }
}
