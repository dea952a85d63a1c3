package dev.stagger.jobs;

import static org.assertj.core.api.Assertions.assertThat;

import dev.stagger.testing.VirtualClock;
import dev.stagger.testsupport.Await;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A started pool's cadences (heartbeat, rescue, purge, stats) on a virtual clock: each happens
 * when the test moves time past it, so the tests say when without sleeping. SQLite, real threads.
 */
class PoolTimingTest {
    @TempDir
    Path dir;
    final VirtualClock clock = new VirtualClock();
    final List<Instant> rescuedAt = new CopyOnWriteArrayList<>();
    final List<QueueStats> measured = new CopyOnWriteArrayList<>();
    final List<String> purged = new CopyOnWriteArrayList<>();
    /** A database error leaves a pool thread waiting out its reconnect pause on a clock that only the test moves. */
    final List<Exception> databaseErrors = new CopyOnWriteArrayList<>();
    final JobListener recorder = new JobListener() {
        @Override
        public void rescued(Job job, JobError error, JobState newState) {
            rescuedAt.add(now());
        }

        @Override
        public void measured(QueueStats stats) {
            measured.add(stats);
        }

        @Override
        public void purged(String queue, JobState state, int deleted) {
            purged.add(queue + " " + state + " " + deleted);
        }

        @Override
        public void databaseError(Exception error, Duration backoff) {
            databaseErrors.add(error);
        }
    };
    DataSource ds;
    JobQueue jobs;
    WorkerPool pool;

    @BeforeEach
    void setUp() {
        ds = dev.stagger.jdbc.SqliteDataSource.file(dir.resolve("jobs.db"));
        jobs = JobQueue.builder(ds).clock(clock).build();
    }

    @AfterEach
    void tearDown() {
        if (pool != null) {
            pool.shutdown(Duration.ZERO);
        }
        assertThat(databaseErrors).as("database errors of the pool").isEmpty();
    }

    private Instant now() {
        return Instant.ofEpochMilli(clock.currentTimeMillis());
    }

    /** A job of a type the pool does not run, claimed by a worker that then died; its lease ends {@code leaseLeft} from now. */
    private long abandoned(Duration leaseLeft) throws Exception {
        long id = jobs.enqueue("q", "elsewhere", "x");
        Stores.abandon(ds, id, 1, "dead-worker", clock.currentTimeMillis(), leaseLeft);
        return id;
    }

    private long leaseUntil(long id) throws Exception {
        return Stores.count(ds, "SELECT lease_until FROM stagger_jobs WHERE id = " + id);
    }

    @Test
    void anExpiredLeaseIsRescuedWithinOneRescueIntervalHoweverRarelyThePoolHeartbeats() throws Exception {
        Instant start = now();
        long id = abandoned(Duration.ofSeconds(5));
        pool = WorkerPool.builder(jobs, "q").handler("t", ctx -> { }).lease(Duration.ofSeconds(30))
                .heartbeatInterval(Duration.ofSeconds(10)).rescueInterval(Duration.ofSeconds(1))
                .statsInterval(Duration.ofHours(1)).jobListener(recorder).build().start();
        // maintenance measures the queue right after its first rescue pass: the pool is under way at time 0
        Await.until("the first maintenance pass", Duration.ofSeconds(10), () -> measured.size() == 1);

        clock.advance(Duration.ofSeconds(6)); // the lease ended at 5 s; no heartbeat is due before 10 s
        Await.until("the rescue", Duration.ofSeconds(10), () -> !rescuedAt.isEmpty());

        assertThat(rescuedAt).singleElement().isEqualTo(start.plusSeconds(6));
        assertThat(jobs.admin().errors(id)).singleElement()
                .satisfies(e -> assertThat(e.exceptionClass()).isEqualTo(JobError.LEASE_EXPIRED));
    }

    /**
     * With the clock standing still no poll ever comes, so a busy pool goes on only if every wake
     * it waits for arrives: a freed handler wakes the fetcher (at once when it waits for any, once
     * a batch's worth is free when it gathers one), and the completer stores the successes the
     * fetcher stops carrying when the queue runs dry.
     */
    @ParameterizedTest(name = "batch {0} of 4 handlers")
    @ValueSource(ints = {4, 2, 1})
    void aBusyPoolDrainsItsQueueWithoutTheClockMoving(int batch) throws Exception {
        int n = 300;
        List<JobRequest> requests = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            requests.add(JobRequest.of("q", "t", "job-" + i));
        }
        jobs.enqueueAll(requests);
        Instant start = now();
        AtomicInteger ran = new AtomicInteger();
        pool = WorkerPool.builder(jobs, "q").concurrency(4).batchSize(batch).handler("t", ctx -> ran.incrementAndGet())
                .build().start();
        Await.until("every job stored as succeeded", Duration.ofSeconds(30),
                () -> jobs.admin().countByState("q").get(JobState.SUCCEEDED) == n);
        assertThat(ran.get()).isEqualTo(n);
        assertThat(now()).as("the clock never moved").isEqualTo(start);
    }

    @Test
    void aRunningJobKeepsItsLeaseAcrossManyLeasesOfTime() throws Exception {
        CountDownLatch started = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        pool = WorkerPool.builder(jobs, "q").handler("t", ctx -> {
            started.countDown();
            release.await(30, TimeUnit.SECONDS);
        }).lease(Duration.ofSeconds(3)).heartbeatInterval(Duration.ofSeconds(1)).rescueInterval(Duration.ofMillis(500))
                .statsInterval(Duration.ZERO).jobListener(recorder).build().start();
        long id = jobs.enqueue("q", "t", "long");
        assertThat(started.await(10, TimeUnit.SECONDS)).isTrue();

        for (int second = 1; second <= 10; second++) {
            clock.advance(Duration.ofSeconds(1));
            long expected = clock.currentTimeMillis() + 3_000;
            Await.until("the heartbeat at " + second + " s", Duration.ofSeconds(10), () -> leaseUntil(id) == expected);
        }
        release.countDown();
        Await.until("the job done", Duration.ofSeconds(10),
                () -> jobs.admin().find(id).orElseThrow().state() == JobState.SUCCEEDED);
        assertThat(rescuedAt).as("never rescued").isEmpty();
        assertThat(jobs.admin().find(id).orElseThrow().attempt()).isEqualTo(1);
    }

    @Test
    void finishedJobsArePurgedOnScheduleOnceOlderThanTheirStatesRetention() throws Exception {
        CountDownLatch ran = new CountDownLatch(2);
        pool = WorkerPool.builder(jobs, "q").handler("t", ctx -> {
            ran.countDown();
            if (ctx.payloadText().equals("bad")) {
                throw new IllegalArgumentException("bad");
            }
        }, dev.stagger.RetryPolicy.builder().maxAttempts(1).build())
                .retention(JobState.SUCCEEDED, Duration.ofHours(1)).retention(JobState.DEAD, Duration.ofDays(7))
                .purgeInterval(Duration.ofMinutes(10)).statsInterval(Duration.ZERO).jobListener(recorder).build().start();
        long ok = jobs.enqueue("q", "t", "ok");
        long bad = jobs.enqueue("q", "t", "bad");
        assertThat(ran.await(10, TimeUnit.SECONDS)).isTrue();
        Await.until("both stored", Duration.ofSeconds(10), () -> jobs.admin().countByState("q").get(JobState.SUCCEEDED) == 1
                && jobs.admin().countByState("q").get(JobState.DEAD) == 1);

        clock.advance(Duration.ofMinutes(50)); // purges at 10, 20, ... 50 minutes find nothing old enough
        clock.advance(Duration.ofMinutes(20)); // the one at 70 minutes finds the succeeded job past its hour
        Await.until("the purge", Duration.ofSeconds(10), () -> !purged.isEmpty());

        assertThat(purged).containsExactly("q SUCCEEDED 1");
        assertThat(jobs.admin().find(ok)).isEmpty();
        assertThat(jobs.admin().find(bad)).as("dead jobs are kept for their own retention").isPresent();
    }

    @Test
    void thePoolMeasuresItsQueueOnItsStatsInterval() throws Exception {
        jobs.enqueue("q", "elsewhere", "due now");
        jobs.enqueue("q", "elsewhere", "tomorrow", EnqueueOptions.defaults().delay(Duration.ofDays(1)));
        abandoned(Duration.ofHours(1));
        pool = WorkerPool.builder(jobs, "q").handler("t", ctx -> { }).statsInterval(Duration.ofSeconds(30))
                .jobListener(recorder).build().start();
        Await.until("the first measurement, at start", Duration.ofSeconds(10), () -> measured.size() == 1);

        clock.advance(Duration.ofSeconds(30));
        Await.until("the second", Duration.ofSeconds(10), () -> measured.size() == 2);

        assertThat(measured.get(0)).isEqualTo(new QueueStats("q", 2, 1, 0, Duration.ZERO));
        assertThat(measured.get(1)).as("the due job has waited 30 s")
                .isEqualTo(new QueueStats("q", 2, 1, 0, Duration.ofSeconds(30)));
        assertThat(jobs.admin().stats("q")).isEqualTo(measured.get(1));
    }
}
