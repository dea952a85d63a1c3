package dev.stagger.jobs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.stagger.EndReason;
import dev.stagger.RandomSource;
import dev.stagger.RetryPolicy;
import dev.stagger.jdbc.SqliteDataSource;
import dev.stagger.testing.VirtualClock;
import dev.stagger.testsupport.Await;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
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

    /** The end reasons of the jobs that went dead. */
    final List<EndReason> reasons = new CopyOnWriteArrayList<>();
    final JobListener deaths = new JobListener() {
        @Override
        public void dead(Job job, JobError error, EndReason reason) {
            reasons.add(reason);
        }
    };

    /** What a worker that claimed the job and then died leaves behind. */
    private void abandon(long id, int attempt, Duration leaseLeft) throws SQLException {
        abandon(id, attempt, leaseLeft, "dead-worker");
    }

    /** A claim by {@code owner} that no handler of it runs. */
    private void abandon(long id, int attempt, Duration leaseLeft, String owner) throws SQLException {
        Stores.abandon(ds, id, attempt, owner, clock.currentTimeMillis(), leaseLeft);
    }

    @Test
    void aJobWhoseLeaseExpiredIsDecidedAsAFailedAttemptAndRunsAgainAfterTheBackoff() throws Exception {
        List<String> events = new CopyOnWriteArrayList<>();
        // full jitter with the random number 0.5 waits half of the first exponential step: 500 ms
        WorkerPool pool = WorkerPool.builder(jobs, "q").handler("t", ctx -> { }).random(RandomSource.sequence(0.5))
                .jobListener(new JobListener() {
                    @Override
                    public void rescued(Job job, JobError error, JobState newState) {
                        events.add(job.id() + " " + job.attempt() + " " + error.exceptionClass() + " " + newState);
                    }
                }).build();
        long id = jobs.enqueue("q", "t", "x");
        abandon(id, 1, Duration.ofSeconds(30));
        assertThat(pool.runAvailable()).as("the lease still holds").isZero();

        clock.advance(Duration.ofSeconds(31));
        assertThat(pool.runAvailable()).as("rescued, waiting out the backoff").isZero();
        assertThat(events).containsExactly(id + " 1 lease-expired AVAILABLE");
        Job rescued = jobs.admin().find(id).orElseThrow();
        assertThat(rescued.state()).isEqualTo(JobState.AVAILABLE);
        assertThat(rescued.runAt()).isEqualTo(Instant.ofEpochMilli(clock.currentTimeMillis()).plusMillis(500));

        clock.advance(Duration.ofMillis(500));
        assertThat(pool.runAvailable()).isEqualTo(1);
        Job job = jobs.admin().find(id).orElseThrow();
        assertThat(job.state()).isEqualTo(JobState.SUCCEEDED);
        assertThat(job.attempt()).isEqualTo(2);
        assertThat(jobs.admin().errors(id)).singleElement().satisfies(e -> {
            assertThat(e.exceptionClass()).isEqualTo(JobError.LEASE_EXPIRED);
            assertThat(e.message()).contains("dead-worker");
        });
    }

    /**
     * A claim can commit and its answer never reach the pool (the connection breaks after the
     * commit, as when the database crashes at that moment): the job is then locked by a live pool
     * that runs no handler for it. The pool's heartbeat must not keep that lease alive; the job is
     * rescued like any other whose lease expired, and runs.
     */
    @Test
    void aJobLockedByALivePoolThatRunsNoHandlerForItIsRescuedWhenItsLeaseExpires() throws Exception {
        WorkerPool pool = WorkerPool.builder(jobs, "q").handler("t", ctx -> { }).build();
        long id = jobs.enqueue("q", "t", "x");
        abandon(id, 1, Duration.ofSeconds(30), pool.workerId());
        pool.start();
        try {
            // a second of the pool's time every 50 ms: a heartbeat (every 10 s) has half a second to run
            Await.until("the orphaned job rescued and run", Duration.ofSeconds(30), () -> {
                clock.advance(Duration.ofSeconds(1));
                return jobs.admin().find(id).orElseThrow().state() == JobState.SUCCEEDED;
            });
        } finally {
            pool.shutdown(Duration.ofSeconds(5));
        }
        assertThat(jobs.admin().find(id).orElseThrow().attempt()).isEqualTo(2);
        assertThat(jobs.admin().errors(id)).singleElement().satisfies(e -> {
            assertThat(e.exceptionClass()).isEqualTo(JobError.LEASE_EXPIRED);
            assertThat(e.message()).contains(pool.workerId());
        });
    }

    /**
     * A rescue takes back at most one batch of expired leases per transaction (100 jobs). A dead
     * worker can leave more: runAvailable takes them all back before it claims, a batch after
     * another, as the pool's maintenance thread does, rather than leaving the rest RUNNING until
     * the next call.
     */
    @Test
    void runAvailableRescuesEveryExpiredLeaseEvenMoreThanOneRescueBatch() throws Exception {
        int abandoned = 250; // two full batches and a partial one
        AtomicInteger rescued = new AtomicInteger();
        // full jitter with the random number 0.5 waits half of the first exponential step: 500 ms
        WorkerPool pool = WorkerPool.builder(jobs, "q").handler("t", ctx -> { }).random(RandomSource.sequence(0.5))
                .jobListener(new JobListener() {
                    @Override
                    public void rescued(Job job, JobError error, JobState newState) {
                        rescued.incrementAndGet();
                    }
                }).build();
        List<JobRequest> requests = new java.util.ArrayList<>();
        for (int i = 0; i < abandoned; i++) {
            requests.add(JobRequest.of("q", "t", "x" + i));
        }
        jobs.enqueueAll(requests);
        Stores.exec(ds, "UPDATE stagger_jobs SET state = 'RUNNING', attempt = 1, locked_by = 'dead-worker', "
                + "lease_until = " + clock.currentTimeMillis() + ", first_attempt_at = " + clock.currentTimeMillis());
        clock.advance(Duration.ofSeconds(1));

        assertThat(pool.runAvailable()).as("every job rescued, waiting out its backoff").isZero();
        assertThat(rescued).hasValue(abandoned);
        assertThat(Stores.count(ds, "SELECT COUNT(*) FROM stagger_jobs WHERE state = 'RUNNING'"))
                .as("no job left to a dead worker").isZero();

        clock.advance(Duration.ofMillis(500));
        assertThat(pool.runAvailable()).as("all of them run after the backoff").isEqualTo(abandoned);
        assertThat(Stores.count(ds, "SELECT COUNT(*) FROM stagger_jobs WHERE state = 'SUCCEEDED' AND attempt = 2"))
                .isEqualTo(abandoned);
    }

    @Test
    void aJobThatLostItsLastAttemptToAnExpiredLeaseGoesDeadAsExhausted() throws Exception {
        WorkerPool pool = WorkerPool.builder(jobs, "q").handler("t", ctx -> { },
                RetryPolicy.builder().maxAttempts(2).build()).jobListener(deaths).build();
        long id = jobs.enqueue("q", "t", "x");
        abandon(id, 2, Duration.ZERO);
        clock.advance(Duration.ofSeconds(1));
        pool.runAvailable();
        assertThat(jobs.admin().find(id).orElseThrow().state()).isEqualTo(JobState.DEAD);
        assertThat(reasons).containsExactly(EndReason.EXHAUSTED);
    }

    @Test
    void aPolicyThatAbortsOnLeaseExpiredSendsARescuedJobToDeadAtOnce() throws Exception {
        WorkerPool pool = WorkerPool.builder(jobs, "q").handler("t", ctx -> { },
                RetryPolicy.builder().maxAttempts(5).abortOn(LeaseExpiredException.class).build())
                .jobListener(deaths).build();
        long id = jobs.enqueue("q", "t", "x");
        abandon(id, 1, Duration.ZERO);
        clock.advance(Duration.ofSeconds(1));
        pool.runAvailable();
        assertThat(jobs.admin().find(id).orElseThrow().state()).isEqualTo(JobState.DEAD);
        assertThat(reasons).containsExactly(EndReason.NOT_RETRYABLE);
    }

    @Test
    void aRescuedJobWhoseNextWaitWouldPassTheDeadlineGoesDeadAsDeadline() throws Exception {
        WorkerPool pool = WorkerPool.builder(jobs, "q").handler("t", ctx -> { },
                RetryPolicy.builder().maxAttempts(5).deadline(Duration.ofMinutes(1)).build())
                .jobListener(deaths).build();
        long id = jobs.enqueue("q", "t", "x");
        abandon(id, 1, Duration.ofMinutes(2)); // its first attempt began now; the lease outlasts the deadline
        clock.advance(Duration.ofMinutes(2).plusMillis(1));
        pool.runAvailable();
        assertThat(jobs.admin().find(id).orElseThrow().state()).isEqualTo(JobState.DEAD);
        assertThat(reasons).containsExactly(EndReason.DEADLINE);
    }

    /** A handler's business write (a receipt) and the job's completion, committed in one transaction. */
    private void receiptCompletedWithin(JobContext ctx) throws SQLException {
        receiptCompletedWithin(ctx, true);
    }

    /** A handler's business write and the job's completion in one transaction, committed or rolled back. */
    private void receiptCompletedWithin(JobContext ctx, boolean commit) throws SQLException {
        try (Connection c = ds.getConnection()) {
            c.setAutoCommit(false);
            try (PreparedStatement ps = c.prepareStatement("INSERT INTO receipts VALUES (?)")) {
                ps.setString(1, ctx.payloadText());
                ps.executeUpdate();
            }
            ctx.completeWithin(c);
            if (commit) {
                c.commit();
            } else {
                c.rollback();
            }
        }
    }

    @Test
    void completingInTheHandlersTransactionCommitsBusinessWriteAndCompletionTogether() throws Exception {
        WorkerPool pool = WorkerPool.builder(jobs, "orders").handler("receipt", this::receiptCompletedWithin).build();
        long id = jobs.enqueue("orders", "receipt", "order-7");
        pool.runAvailable();
        assertThat(jobs.admin().find(id).orElseThrow().state()).isEqualTo(JobState.SUCCEEDED);
        assertThat(Stores.count(ds, "SELECT COUNT(*) FROM receipts")).isEqualTo(1);
    }

    @Test
    void aPoolThatKeepsNoSuccessesDeletesTheJobAndItsHistoryInTheHandlersTransaction() throws Exception {
        AtomicInteger calls = new AtomicInteger();
        WorkerPool pool = WorkerPool.builder(jobs, "orders").retention(JobState.SUCCEEDED, Duration.ZERO)
                .handler("receipt", ctx -> {
                    if (calls.incrementAndGet() == 1) {
                        throw new java.io.IOException("provider timed out");
                    }
                    receiptCompletedWithin(ctx);
                }).build();
        long id = jobs.enqueue("orders", "receipt", "order-7", EnqueueOptions.defaults().key("order-7"));
        pool.runAvailable();
        assertThat(jobs.admin().errors(id)).as("the first attempt failed").hasSize(1);
        clock.advance(Duration.ofMinutes(10));
        pool.runAvailable();

        assertThat(calls).hasValue(2);
        assertThat(Stores.count(ds, "SELECT COUNT(*) FROM receipts")).isEqualTo(1);
        assertThat(jobs.admin().find(id)).as("deleted with the business write").isEmpty();
        assertThat(jobs.admin().errors(id)).isEmpty();
        assertThat(jobs.enqueue("orders", "receipt", "order-7", EnqueueOptions.defaults().key("order-7")))
                .as("its key is free again at once").isNotEqualTo(id);
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
        }).jobListener(new JobListener() {
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
            receiptCompletedWithin(ctx, false);
            throw new IllegalStateException("payment provider said no");
        }).build();
        long id = jobs.enqueue("orders", "receipt", "order-7");
        pool.runAvailable();
        Job job = jobs.admin().find(id).orElseThrow();
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
        assertThat(jobs.admin().find(id).orElseThrow().state()).isEqualTo(JobState.RUNNING);
        assertThat(jobs.admin().errors(id)).as("the outcome of a lost lease is not stored").isEmpty();
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
