package dev.stagger.jobs;

import static org.assertj.core.api.Assertions.assertThat;

import dev.stagger.Backoff;
import dev.stagger.RetryPolicy;
import dev.stagger.jdbc.UrlDataSource;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.assertj.core.api.SoftAssertions;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A worker frozen (SIGSTOP) inside its own transaction holds a row lock on a job whose lease ran
 * out. The other workers' rescue must not queue behind that lock, and their heartbeats must not
 * wait for their rescue: a live worker keeps its leases, and other expired jobs are still rescued.
 */
class FrozenWorkerTest {
    static final Duration LEASE = Duration.ofMillis(1000);

    UrlDataSource ds;
    String prefix;
    JobQueue jobs;
    final List<WorkerPool> pools = new ArrayList<>();
    final Map<String, AtomicInteger> starts = new ConcurrentHashMap<>();
    final CountDownLatch longJobStarted = new CountDownLatch(1);
    final CountDownLatch release = new CountDownLatch(1);

    @BeforeEach
    void setUp() throws Exception {
        ds = Stores.postgres();
        prefix = Stores.uniquePrefix();
        jobs = JobQueue.builder(ds).tablePrefix(prefix).build();
    }

    @AfterEach
    void tearDown() throws Exception {
        release.countDown();
        for (WorkerPool p : pools) {
            p.shutdown(Duration.ofSeconds(5));
        }
        Stores.dropPostgres(ds, prefix);
    }

    private WorkerPool started(String name) {
        WorkerPool pool = WorkerPool.builder(jobs, "q").workerId(name).concurrency(2)
                .handler("work", ctx -> {
                    starts.computeIfAbsent(ctx.payloadText(), k -> new AtomicInteger()).incrementAndGet();
                    if (ctx.payloadText().equals("long")) {
                        longJobStarted.countDown();
                        release.await(60, TimeUnit.SECONDS);
                    }
                })
                .policy(RetryPolicy.builder().maxAttempts(5).backoff(Backoff.fixed(Duration.ofMillis(10))).build())
                .lease(LEASE).heartbeatInterval(Duration.ofMillis(250)).rescueInterval(Duration.ofMillis(100))
                .pollInterval(Duration.ofMillis(100)).build();
        pools.add(pool);
        return pool.start();
    }

    private int runsOf(String payload) {
        AtomicInteger n = starts.get(payload);
        return n == null ? 0 : n.get();
    }

    @Test
    void aTransactionHeldOpenOnAnExpiredJobDelaysNeitherHeartbeatsNorTheRescueOfOtherJobs() throws Exception {
        long frozen = jobs.enqueue("q", "work", "frozen");
        long orphan = jobs.enqueue("q", "work", "orphan");
        // worker A claimed both and was then stopped: their leases ran out long ago
        Stores.exec(ds, "UPDATE " + prefix + "jobs SET state = 'RUNNING', attempt = 1, locked_by = 'frozen-worker', "
                + "lease_until = 1, started_at = 1, first_attempt_at = 1 WHERE id IN (" + frozen + ", " + orphan + ")");
        SoftAssertions soft = new SoftAssertions();
        try (Connection a = ds.getConnection(); Statement s = a.createStatement()) {
            // A had completed 'frozen' in its own transaction (completeWithin) and stopped before its commit
            a.setAutoCommit(false);
            s.executeUpdate("UPDATE " + prefix + "jobs SET state = 'SUCCEEDED', finished_at = 2, locked_by = NULL, "
                    + "lease_until = NULL WHERE id = " + frozen);

            started("b");
            long longJob = jobs.enqueue("q", "work", "long");
            assertThat(longJobStarted.await(10, TimeUnit.SECONDS)).as("the long job started on b").isTrue();
            // A stays frozen for three leases of the long job; a pool that starts meanwhile finds it expired,
            // unless b's heartbeats kept it
            Thread.sleep(2 * LEASE.toMillis());
            started("c");
            Thread.sleep(LEASE.toMillis());
            soft.assertThat(runsOf("orphan")).as("the orphan was rescued and ran while A's lock was held").isEqualTo(1);
            a.commit(); // A resumes
            Thread.sleep(2 * LEASE.toMillis()); // whatever waited on A's lock has run by now

            soft.assertThat(runsOf("long")).as("the long job ran once: b kept its lease").isEqualTo(1);
            Job held = jobs.admin().find(longJob).orElseThrow();
            soft.assertThat(held.state()).isEqualTo(JobState.RUNNING);
            soft.assertThat(held.attempt()).isEqualTo(1);
            soft.assertThat(jobs.admin().errors(longJob)).as("no lease-expired entry for a live worker").isEmpty();
            soft.assertThat(jobs.admin().find(frozen).orElseThrow().state()).as("A's own completion committed")
                    .isEqualTo(JobState.SUCCEEDED);
            soft.assertThat(runsOf("frozen")).as("the job A completed never ran again").isZero();
        }
        soft.assertAll();
    }
}
