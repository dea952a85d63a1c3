package dev.stagger.jobs;

import static org.assertj.core.api.Assertions.assertThat;

import dev.stagger.testing.VirtualClock;
import dev.stagger.testsupport.Await;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * On PostgreSQL a pool that claims back to back starts each claim after the job its last claim
 * ranked last (the fetcher's floor), instead of at the head of the due index, where every job
 * claimed since the last vacuum left a dead entry. What that must not cost: a job that ranks ahead
 * of the floor is seen at once when its enqueue wakes the pool, within the rescan interval on the
 * pool's clock when nothing does, and as soon as the floor's priority runs out; priority order
 * holds. One handler and claims of one job, so the order the jobs ran in is the order they were
 * claimed in; a virtual clock, so the rescan interval passes only when the test says.
 */
class ClaimFloorTest {
    @TempDir
    Path dir;
    final VirtualClock clock = new VirtualClock();
    DataSource ds;
    String prefix;
    JobQueue jobs;
    WorkerPool pool;
    final List<String> ran = new CopyOnWriteArrayList<>();

    @BeforeEach
    void setUp() throws Exception {
        Stores.Opened opened = Stores.open("postgresql", dir, clock); // skips (fails under CI=true) without PostgreSQL
        ds = opened.dataSource();
        prefix = opened.prefix();
        jobs = opened.jobs();
    }

    @AfterEach
    void tearDown() throws Exception {
        if (pool != null) {
            pool.shutdown(Duration.ofSeconds(5));
        }
        Stores.dropPostgres(ds, prefix);
    }

    private void backlog(int n, int priority, String name) {
        List<JobRequest> batch = new ArrayList<>();
        for (int i = 1; i <= n; i++) {
            batch.add(JobRequest.of("q", "work", name + i).with(EnqueueOptions.defaults().priority(priority)));
        }
        jobs.enqueueAll(batch);
    }

    /** Runs the queue with one handler that records each job and, on the first one, does {@code onFirst}. */
    private void runAll(int expected, ThrowingRunnable onFirst) throws Exception {
        // no LISTEN: its wake at connect, at a moment the test does not choose, would also make the next claim look from the head
        pool = WorkerPool.builder(jobs, "q").listen(false).concurrency(1).batchSize(1).handler("work", ctx -> {
            ran.add(ctx.payloadText());
            if (ran.size() == 1) {
                onFirst.run();
            }
        }).build().start();
        Await.until(expected + " jobs run", Duration.ofSeconds(30), () -> ran.size() == expected);
    }

    /** A job of priority 10, inserted the way another process's enqueue would be: nothing wakes this pool. */
    private void insertUrgentUnannounced() throws Exception {
        Stores.exec(ds, "INSERT INTO " + prefix + "jobs (queue, type, payload, state, priority, attempt, max_attempts, run_at,"
                + " created_at) VALUES ('q', 'work', convert_to('urgent', 'UTF8'), 'AVAILABLE', 10, 0, 3, 0, 0)");
    }

    @Test
    void aJobEnqueuedAheadOfTheFloorIsClaimedNextBecauseItsEnqueueWakesThePool() throws Exception {
        backlog(6, 0, "a");
        runAll(7, () -> jobs.enqueue("q", "work", "urgent", EnqueueOptions.defaults().priority(10)));
        assertThat(ran).containsExactly("a1", "urgent", "a2", "a3", "a4", "a5", "a6");
    }

    @Test
    void aJobAheadOfTheFloorThatNothingAnnouncedIsClaimedOnceTheRescanIntervalHasPassed() throws Exception {
        backlog(6, 0, "a");
        runAll(7, () -> {
            insertUrgentUnannounced();
            clock.advance(Duration.ofNanos(dev.stagger.jobs.internal.Fetcher.RESCAN_NANOS));
        });
        assertThat(ran).containsExactly("a1", "urgent", "a2", "a3", "a4", "a5", "a6");
    }

    @Test
    void withinTheRescanIntervalAnUnannouncedJobAheadOfTheFloorWaitsUntilTheFloorsPriorityRunsOut() throws Exception {
        backlog(4, 5, "high");
        backlog(3, 0, "low");
        runAll(8, this::insertUrgentUnannounced);
        // claims after the floor see only priority 5 after "high1"; the first that comes up short
        // looks from the head again, at once, and finds the urgent job before the lower priority
        assertThat(ran).containsExactly("high1", "high2", "high3", "high4", "urgent", "low1", "low2", "low3");
    }

    @FunctionalInterface
    interface ThrowingRunnable {
        void run() throws Exception;
    }
}
