package dev.stagger.jobs;

import static org.assertj.core.api.Assertions.assertThat;

import dev.stagger.RetryPolicy;
import dev.stagger.jdbc.UrlDataSource;
import dev.stagger.testing.VirtualClock;
import dev.stagger.testsupport.Await;
import java.io.BufferedReader;
import java.io.File;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Several pools and processes on one shared PostgreSQL. Every test uses its own tables (a
 * unique prefix) and finds its own connections by a unique ApplicationName, because other test
 * suites use the same server at the same time.
 */
class PostgresWorkersTest {
    UrlDataSource ds;
    String prefix;
    JobQueue jobs;
    RunLog log;
    final List<Process> processes = new ArrayList<>();
    final List<WorkerPool> pools = new ArrayList<>();

    @BeforeEach
    void setUp() throws Exception {
        ds = Stores.postgres();
        prefix = Stores.uniquePrefix();
        jobs = JobQueue.builder(ds).tablePrefix(prefix).build();
        log = new RunLog(ds, prefix);
        log.create();
    }

    @AfterEach
    void tearDown() throws Exception {
        for (Process p : processes) {
            p.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        }
        for (WorkerPool p : pools) {
            p.shutdown(Duration.ofSeconds(5));
        }
        Stores.dropPostgres(ds, prefix);
    }

    private WorkerPool.Builder pool(String name, JobHandler handler) {
        return WorkerPool.builder(jobs, "q").workerId(name).concurrency(4).handler("work", handler)
                .pollInterval(Duration.ofMillis(200)).rescueInterval(Duration.ofMillis(200));
    }

    private WorkerPool started(WorkerPool pool) {
        pools.add(pool);
        return pool.start();
    }

    private long succeeded() throws Exception {
        return jobs.admin().countByState("q").get(JobState.SUCCEEDED);
    }

    private List<Long> enqueue(int n) throws Exception {
        List<JobRequest> batch = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            batch.add(JobRequest.of("q", "work", "job-" + i));
        }
        return jobs.enqueueAll(batch);
    }

    /** Starts {@link WorkerProcess} in a new JVM and waits until its pool runs. */
    private Process workerProcess(String name, long leaseMillis, long handlerMillis) throws Exception {
        String java = System.getProperty("java.home") + File.separator + "bin" + File.separator + "java";
        Process p = new ProcessBuilder(java, "-Xmx128m", "-XX:TieredStopAtLevel=1", "-cp",
                System.getProperty("java.class.path"), WorkerProcess.class.getName(), ds.url(), Stores.pgUser(),
                Stores.pgPassword(), prefix, "q", String.valueOf(leaseMillis), String.valueOf(handlerMillis), name)
                .redirectErrorStream(true).start();
        processes.add(p);
        BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
        String line;
        while ((line = out.readLine()) != null && !line.equals("ready")) {
            // skip anything the JVM prints before the pool is up
        }
        assertThat(line).as("worker process %s started", name).isEqualTo("ready");
        return p;
    }

    private static void assertEveryJobRanExactlyOnce(List<Long> ids, List<RunLog.Run> runs) {
        Map<Long, Long> perJob = runs.stream().collect(Collectors.groupingBy(RunLog.Run::jobId, Collectors.counting()));
        assertThat(perJob.keySet()).containsExactlyInAnyOrderElementsOf(ids);
        assertThat(perJob.values()).allMatch(n -> n == 1);
    }

    @Test
    void concurrentEnqueuesOfOneKeyMakeOneJob() throws Exception {
        JobQueueTest.assertOneJobUnderConcurrentEnqueue(jobs);
    }

    @Test
    void bulkEnqueueReturnsIdsInOrderAcrossBatchedAndKeyedJobs() throws Exception {
        List<Long> ids = jobs.enqueueAll(List.of(
                JobRequest.of("q", "work", "a"),
                JobRequest.of("q", "work", "b"),
                JobRequest.of("q", "work", "c").with(EnqueueOptions.defaults().key("k")),
                JobRequest.of("q", "work", "d"),
                JobRequest.of("q", "work", "e").with(EnqueueOptions.defaults().key("k"))));
        assertThat(ids).hasSize(5);
        assertThat(ids.get(4)).isEqualTo(ids.get(2));
        List<String> payloads = new ArrayList<>();
        for (long id : ids) {
            payloads.add(jobs.admin().find(id).orElseThrow().payloadText());
        }
        assertThat(payloads).containsExactly("a", "b", "c", "d", "c");
    }

    @Test
    void aJobEnqueuedInARolledBackTransactionDoesNotExist() throws Exception {
        try (Connection c = ds.getConnection()) {
            c.setAutoCommit(false);
            jobs.enqueue(c, "q", "work", "x", EnqueueOptions.defaults());
            c.rollback();
        }
        assertThat(jobs.admin().countByState("q").values()).allMatch(n -> n == 0);
    }

    @Test
    void twoPoolsRunEveryJobOnceAndNeverTheSameJobAtOnce() throws Exception {
        Map<Long, AtomicInteger> running = new ConcurrentHashMap<>();
        Set<Long> overlapped = ConcurrentHashMap.newKeySet();
        List<Long> ids = enqueue(300);
        for (String name : List.of("pool-a", "pool-b")) {
            JobHandler record = log.recording(name, 2);
            started(pool(name, ctx -> {
                if (running.computeIfAbsent(ctx.job().id(), k -> new AtomicInteger()).incrementAndGet() > 1) {
                    overlapped.add(ctx.job().id());
                }
                try {
                    record.handle(ctx);
                } finally {
                    running.get(ctx.job().id()).decrementAndGet();
                }
            }).build());
        }
        Await.until("300 jobs done", Duration.ofSeconds(60), () -> succeeded() == 300);
        assertThat(overlapped).isEmpty();
        List<RunLog.Run> runs = log.runs();
        assertEveryJobRanExactlyOnce(ids, runs);
        assertThat(runs).extracting(RunLog.Run::worker).contains("pool-a", "pool-b");
    }

    @Test
    void aPoolInAnotherJvmAndOneHereShareTheQueueWithoutRunningAJobTwice() throws Exception {
        workerProcess("jvm-2", 10_000, 10);
        started(pool("jvm-1", log.recording("jvm-1", 10)).build());
        List<Long> ids = enqueue(400);
        Await.until("400 jobs done", Duration.ofSeconds(60), () -> succeeded() == 400);
        List<RunLog.Run> runs = log.runs();
        assertEveryJobRanExactlyOnce(ids, runs);
        assertThat(runs).extracting(RunLog.Run::worker).contains("jvm-1", "jvm-2");
    }

    @Test
    void jobsOfAWorkerKilledMidJobCompleteElsewhereAfterTheLeaseExpires() throws Exception {
        // a 5 s lease leaves the doomed worker's heartbeat (every 1.7 s) seconds of slack on a loaded machine:
        // a late heartbeat must not let its own rescue run a job twice before the kill
        Process doomed = workerProcess("doomed", 5_000, 120_000);
        List<Long> ids = enqueue(4);
        // one job per handler: a pool claims no job it cannot start
        Await.until("the doomed worker holds every job", Duration.ofSeconds(20),
                () -> jobs.admin().countByState("q").get(JobState.RUNNING) == 4);
        doomed.destroyForcibly().waitFor(10, TimeUnit.SECONDS);

        started(pool("survivor", log.recording("survivor", 0)).lease(Duration.ofSeconds(2)).build());
        Await.until("every job done", Duration.ofSeconds(30), () -> succeeded() == 4);
        assertEveryJobRanExactlyOnce(ids, log.runs());
        for (Job j : jobs.admin().list(JobState.SUCCEEDED, "q", 10)) {
            assertThat(j.attempt()).as("the lost attempt is counted").isEqualTo(2);
            assertThat(jobs.admin().errors(j.id())).singleElement()
                    .satisfies(e -> assertThat(e.exceptionClass()).isEqualTo(JobError.LEASE_EXPIRED));
        }
    }

    @Test
    void aWorkerKilledMidDrainLosesNoJobAndNoStoredSuccessRunsAgain() throws Exception {
        // quick jobs: the doomed pool's claims carry its successes, so the kill lands between batches,
        // with claimed jobs running and finished ones not yet stored
        Process doomed = workerProcess("doomed", 2_000, 1);
        List<Long> ids = enqueue(600);
        Await.until("the doomed worker is mid-drain", Duration.ofSeconds(60), () -> succeeded() >= 100);
        doomed.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        Set<Long> storedBeforeTheKill = jobs.admin().list(JobState.SUCCEEDED, "q", 1000).stream().map(Job::id)
                .collect(Collectors.toSet());

        started(pool("survivor", log.recording("survivor", 0)).lease(Duration.ofSeconds(2)).build());
        Await.until("every job done", Duration.ofSeconds(60), () -> succeeded() == 600);

        List<RunLog.Run> runs = log.runs();
        assertThat(runs.stream().map(RunLog.Run::jobId).collect(Collectors.toSet()))
                .containsExactlyInAnyOrderElementsOf(ids);
        assertThat(runs).filteredOn(r -> r.worker().equals("survivor"))
                .as("a success stored before the kill is never run again")
                .noneMatch(r -> storedBeforeTheKill.contains(r.jobId()));
    }

    @Test
    void workersRecoverFromLostConnectionsWithoutLosingJobs() throws Exception {
        String app = prefix + "app";
        UrlDataSource flaky = Stores.postgres(app);
        JobQueue flakyJobs = JobQueue.builder(flaky).tablePrefix(prefix).build();
        List<String> dbErrors = new CopyOnWriteArrayList<>();
        // handlers past each threshold wait until the connections were cut, so the cut lands mid-run however
        // fast or slow the machine is
        int[] thresholds = {50, 200};
        CountDownLatch[] cut = {new CountDownLatch(1), new CountDownLatch(1)};
        AtomicInteger starts = new AtomicInteger();
        Set<Long> seen = ConcurrentHashMap.newKeySet();
        JobHandler record = log.recording("flaky", 10);
        WorkerPool pool = WorkerPool.builder(flakyJobs, "q").workerId("flaky").concurrency(4)
                .handler("work", ctx -> {
                    // count each job once: a job run again after a lost outcome must not hold a gate shut
                    int n = seen.add(ctx.job().id()) ? starts.incrementAndGet() : 0;
                    for (int i = 0; i < thresholds.length; i++) {
                        if (n > thresholds[i] && !cut[i].await(60, TimeUnit.SECONDS)) {
                            throw new IllegalStateException("connections never cut");
                        }
                    }
                    record.handle(ctx);
                })
                .policy(RetryPolicy.builder().maxAttempts(20).build())
                .pollInterval(Duration.ofMillis(100)).lease(Duration.ofSeconds(5))
                .jobListener(new JobListener() {
                    @Override
                    public void databaseError(Exception error, Duration backoff) {
                        dbErrors.add(error.getClass().getSimpleName());
                    }
                }).build();
        List<Long> ids = enqueue(500);
        started(pool);
        for (int i = 0; i < thresholds.length; i++) {
            int threshold = thresholds[i];
            Await.until(threshold + " jobs done", Duration.ofSeconds(60), () -> succeeded() >= threshold);
            int killed = terminateBackends(app);
            assertThat(killed).as("backends of %s terminated", app).isPositive();
            assertThat(succeeded()).as("terminated mid-run").isLessThan(500);
            cut[i].countDown();
        }
        Await.until("every job done", Duration.ofSeconds(60), () -> succeeded() == 500);
        assertThat(dbErrors).isNotEmpty();
        Set<Long> ran = log.runs().stream().map(RunLog.Run::jobId).collect(Collectors.toSet());
        assertThat(ran).containsExactlyInAnyOrderElementsOf(ids);
    }

    private int terminateBackends(String app) throws Exception {
        try (Connection c = ds.getConnection(); PreparedStatement ps = c.prepareStatement(
                "SELECT COUNT(*) FROM (SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                        + "WHERE application_name = ?) t")) {
            ps.setString(1, app);
            try (var rs = ps.executeQuery()) {
                rs.next();
                return rs.getInt(1);
            }
        }
    }

    @Test
    void anIdlePoolIsWokenByNotifyWithoutWaitingForThePoll() throws Exception {
        String app = prefix + "listen";
        // the pool's polls run on a virtual clock that never moves: only a NOTIFY can wake it
        JobQueue listening = JobQueue.builder(Stores.postgres(app)).tablePrefix(prefix).clock(new VirtualClock()).build();
        started(WorkerPool.builder(listening, "woken").concurrency(1).handler("work", ctx -> { }).build());
        Await.until("the pool listens", Duration.ofSeconds(10), () -> Stores.count(ds,
                "SELECT COUNT(*) FROM pg_stat_activity WHERE application_name = '" + app
                        + "' AND query LIKE 'LISTEN%'") == 1);
        GracefulShutdownTest.awaitIdleFetcher("woken");
        jobs.enqueue("woken", "work", "wake up"); // through another JobQueue object: no in-process wake-up
        Await.until("the job ran without a poll", Duration.ofSeconds(10),
                () -> jobs.admin().countByState("woken").get(JobState.SUCCEEDED) == 1);
    }
}
