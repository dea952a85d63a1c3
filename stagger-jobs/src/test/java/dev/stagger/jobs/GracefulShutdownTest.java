package dev.stagger.jobs;

import static org.assertj.core.api.Assertions.assertThat;

import dev.stagger.Clock;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Stopping a running pool (SQLite, real threads). */
class GracefulShutdownTest {
    @TempDir
    Path dir;

    @Test
    void shutdownWaitsForRunningJobsAndLeavesTheRestQueued() throws Exception {
        JobQueue jobs = Stores.sqlite(dir, Clock.system());
        CountDownLatch started = new CountDownLatch(2);
        CountDownLatch release = new CountDownLatch(1);
        WorkerPool pool = WorkerPool.builder(jobs, "q").concurrency(2).pollInterval(Duration.ofMillis(50))
                .handler("slow", ctx -> {
                    started.countDown();
                    release.await();
                }).build();
        for (int i = 0; i < 5; i++) {
            jobs.enqueue("q", "slow", "job-" + i);
        }
        pool.start();
        assertThat(started.await(10, TimeUnit.SECONDS)).isTrue();

        CompletableFuture<Boolean> stopped = CompletableFuture.supplyAsync(() -> pool.shutdown(Duration.ofSeconds(20)));
        Thread.sleep(200);
        assertThat(stopped).as("still waiting for the two running jobs").isNotDone();
        release.countDown();

        assertThat(stopped.get(20, TimeUnit.SECONDS)).isTrue();
        assertThat(jobs.countByState("q")).containsEntry(JobState.SUCCEEDED, 2L).containsEntry(JobState.RUNNING, 0L)
                .containsEntry(JobState.AVAILABLE, 3L);
        assertThat(jobs.list(JobState.AVAILABLE, "q", 10)).allSatisfy(j -> assertThat(j.attempt()).isZero());
    }

    @Test
    void jobsStillRunningAtTheTimeoutAreInterruptedAndGivenBack() throws Exception {
        JobQueue jobs = Stores.sqlite(dir, Clock.system());
        CountDownLatch started = new CountDownLatch(1);
        WorkerPool pool = WorkerPool.builder(jobs, "q").concurrency(1).pollInterval(Duration.ofMillis(50))
                .handler("stuck", ctx -> {
                    started.countDown();
                    Thread.sleep(60_000);
                }).build();
        long id = jobs.enqueue("q", "stuck", "x");
        pool.start();
        assertThat(started.await(10, TimeUnit.SECONDS)).isTrue();

        assertThat(pool.shutdown(Duration.ofMillis(300))).isFalse();
        Job job = jobs.find(id).orElseThrow();
        assertThat(job.state()).isEqualTo(JobState.AVAILABLE);
        assertThat(job.attempt()).as("the interrupted attempt is not counted").isZero();
        assertThat(jobs.errors(id)).isEmpty();
    }

    @Test
    void claimedJobsStillWaitingForAHandlerAtTheTimeoutAreGivenBackUncounted() throws Exception {
        JobQueue jobs = Stores.sqlite(dir, Clock.system());
        CountDownLatch started = new CountDownLatch(1);
        // one handler thread, two jobs claimed per query: the second waits in the pool behind the first
        WorkerPool pool = WorkerPool.builder(jobs, "q").concurrency(1).batchSize(2).pollInterval(Duration.ofMillis(50))
                .handler("stuck", ctx -> {
                    started.countDown();
                    Thread.sleep(60_000);
                }).build();
        long first = jobs.enqueue("q", "stuck", "first", EnqueueOptions.defaults().priority(1));
        long second = jobs.enqueue("q", "stuck", "second");
        pool.start();
        assertThat(started.await(10, TimeUnit.SECONDS)).isTrue();
        Waits.until("both jobs claimed", Duration.ofSeconds(10),
                () -> jobs.countByState("q").get(JobState.RUNNING) == 2);

        assertThat(pool.shutdown(Duration.ofMillis(300))).isFalse();
        for (long id : new long[] {first, second}) {
            Job job = jobs.find(id).orElseThrow();
            assertThat(job.state()).as("job %d", id).isEqualTo(JobState.AVAILABLE);
            assertThat(job.attempt()).as("job %d", id).isZero();
        }
    }

    @Test
    void aHandlerThatWrapsTheShutdownInterruptGetsItsAttemptBack() throws Exception {
        JobQueue jobs = Stores.sqlite(dir, Clock.system());
        CountDownLatch started = new CountDownLatch(1);
        WorkerPool pool = WorkerPool.builder(jobs, "q").concurrency(1).pollInterval(Duration.ofMillis(50))
                .handler("wraps", ctx -> {
                    started.countDown();
                    try {
                        Thread.sleep(60_000);
                    } catch (InterruptedException e) {
                        throw new IllegalStateException("interrupted while waiting", e);
                    }
                }).build();
        long id = jobs.enqueue("q", "wraps", "x", EnqueueOptions.defaults().maxAttempts(1));
        pool.start();
        assertThat(started.await(10, TimeUnit.SECONDS)).isTrue();

        assertThat(pool.shutdown(Duration.ofMillis(300))).isFalse();
        Job job = jobs.find(id).orElseThrow();
        assertThat(job.state()).as("not dead: it was stopped, it did not fail").isEqualTo(JobState.AVAILABLE);
        assertThat(job.attempt()).isZero();
        assertThat(jobs.errors(id)).isEmpty();
    }

    @Test
    void noPoolThreadOutlivesShutdownEvenWhenHandlersHadToBeInterrupted() throws Exception {
        JobQueue jobs = Stores.sqlite(dir, Clock.system());
        CountDownLatch started = new CountDownLatch(2);
        WorkerPool pool = WorkerPool.builder(jobs, "leaks").concurrency(2).pollInterval(Duration.ofMillis(50))
                .handler("stuck", ctx -> {
                    started.countDown();
                    Thread.sleep(60_000);
                }).build();
        jobs.enqueue("leaks", "stuck", "a");
        jobs.enqueue("leaks", "stuck", "b");
        pool.start();
        assertThat(started.await(10, TimeUnit.SECONDS)).isTrue();
        assertThat(poolThreads("leaks")).isNotEmpty();

        pool.shutdown(Duration.ofMillis(200));

        // a thread may still be finishing its last instructions when shutdown returns; a leaked one stays
        Waits.until("every pool thread ended", Duration.ofSeconds(5), () -> poolThreads("leaks").isEmpty());
    }

    private static List<String> poolThreads(String queue) {
        return Thread.getAllStackTraces().keySet().stream().filter(Thread::isAlive).map(Thread::getName)
                .filter(name -> name.startsWith("stagger-jobs-" + queue + "-")).toList();
    }

    @Test
    void anEnqueueThroughTheSameQueueObjectWakesAnIdlePoolAtOnce() throws Exception {
        JobQueue jobs = Stores.sqlite(dir, Clock.system());
        CountDownLatch ran = new CountDownLatch(1);
        try (WorkerPool pool = WorkerPool.builder(jobs, "q").pollInterval(Duration.ofSeconds(60))
                .handler("t", ctx -> ran.countDown()).build().start()) {
            Thread.sleep(300); // let the first, empty poll pass so the fetcher is idle
            jobs.enqueue("q", "t", "x");
            assertThat(ran.await(10, TimeUnit.SECONDS)).as("ran long before the 60 s poll").isTrue();
        }
    }

    @Test
    void aStartedPoolDrainsTheQueue() throws Exception {
        JobQueue jobs = Stores.sqlite(dir, Clock.system());
        try (WorkerPool pool = WorkerPool.builder(jobs, "q").concurrency(3).pollInterval(Duration.ofMillis(20))
                .handler("t", ctx -> { }).build().start()) {
            for (int i = 0; i < 100; i++) {
                jobs.enqueue("q", "t", "n" + i);
            }
            Waits.until("100 jobs done", Duration.ofSeconds(20),
                    () -> jobs.countByState("q").get(JobState.SUCCEEDED) == 100);
        }
    }
}
