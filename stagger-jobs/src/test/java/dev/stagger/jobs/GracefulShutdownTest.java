package dev.stagger.jobs;

import static org.assertj.core.api.Assertions.assertThat;

import dev.stagger.Clock;
import dev.stagger.testing.VirtualClock;
import dev.stagger.testsupport.Await;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Stopping a running pool (SQLite, real threads). The pool's timing runs on a virtual clock: its
 * polls never fire and its shutdown timeout passes only when the test moves time, so nothing here
 * waits on the wall clock for a delay.
 */
class GracefulShutdownTest {
    @TempDir
    Path dir;

    final VirtualClock clock = new VirtualClock();
    final List<JobContext> running = new CopyOnWriteArrayList<>();

    /** Waits until every running handler sees the pool shutting down: the shutdown has begun. */
    private void awaitShutdownBegun() throws Exception {
        Await.until("the shutdown to begin", Duration.ofSeconds(10),
                () -> !running.isEmpty() && running.stream().allMatch(JobContext::isShuttingDown));
    }

    @Test
    @Timeout(value = 120, threadMode = Timeout.ThreadMode.SEPARATE_THREAD) // a lost wake-up hangs: the clock never reaches the timeout
    void shutdownReturnsAsSoonAsThePoolsThreadsHaveEndedEveryTime() throws Exception {
        JobQueue jobs = Stores.sqlite(dir, clock);
        for (int i = 0; i < 100; i++) {
            WorkerPool pool = WorkerPool.builder(jobs, "q").handler("t", ctx -> { }).build().start();

            assertThat(pool.shutdown(Duration.ofDays(1))).isTrue();
        }
    }

    @Test
    void shutdownWaitsForRunningJobsAndLeavesTheRestQueued() throws Exception {
        JobQueue jobs = Stores.sqlite(dir, clock);
        CountDownLatch started = new CountDownLatch(2);
        CountDownLatch release = new CountDownLatch(1);
        WorkerPool pool = WorkerPool.builder(jobs, "q").concurrency(2)
                .handler("slow", ctx -> {
                    running.add(ctx);
                    started.countDown();
                    release.await();
                }).build();
        for (int i = 0; i < 5; i++) {
            jobs.enqueue("q", "slow", "job-" + i);
        }
        pool.start();
        assertThat(started.await(10, TimeUnit.SECONDS)).isTrue();

        CompletableFuture<Boolean> stopped = CompletableFuture.supplyAsync(() -> pool.shutdown(Duration.ofSeconds(20)));
        awaitShutdownBegun();
        release.countDown(); // the timeout never passes on the virtual clock: only the handlers can end the wait

        assertThat(stopped.get(20, TimeUnit.SECONDS)).isTrue();
        assertThat(jobs.admin().countByState("q")).containsEntry(JobState.SUCCEEDED, 2L).containsEntry(JobState.RUNNING, 0L)
                .containsEntry(JobState.AVAILABLE, 3L);
        assertThat(jobs.admin().list(JobState.AVAILABLE, "q", 10)).allSatisfy(j -> assertThat(j.attempt()).isZero());
    }

    @Test
    void jobsStillRunningAtTheTimeoutAreInterruptedAndGivenBack() throws Exception {
        JobQueue jobs = Stores.sqlite(dir, clock);
        CountDownLatch started = new CountDownLatch(1);
        WorkerPool pool = WorkerPool.builder(jobs, "q").concurrency(1)
                .handler("stuck", ctx -> {
                    running.add(ctx);
                    started.countDown();
                    Thread.sleep(60_000);
                }).build();
        long id = jobs.enqueue("q", "stuck", "x");
        pool.start();
        assertThat(started.await(10, TimeUnit.SECONDS)).isTrue();

        CompletableFuture<Boolean> stopped = CompletableFuture.supplyAsync(() -> pool.shutdown(Duration.ofMillis(300)));
        awaitShutdownBegun();
        clock.advance(Duration.ofMillis(300));

        assertThat(stopped.get(20, TimeUnit.SECONDS)).isFalse();
        Job job = jobs.admin().find(id).orElseThrow();
        assertThat(job.state()).isEqualTo(JobState.AVAILABLE);
        assertThat(job.attempt()).as("the interrupted attempt is not counted").isZero();
        assertThat(jobs.admin().errors(id)).isEmpty();
    }

    @Test
    void aHandlerThatWrapsTheShutdownInterruptGetsItsAttemptBack() throws Exception {
        JobQueue jobs = Stores.sqlite(dir, clock);
        CountDownLatch started = new CountDownLatch(1);
        WorkerPool pool = WorkerPool.builder(jobs, "q").concurrency(1)
                .handler("wraps", ctx -> {
                    running.add(ctx);
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

        CompletableFuture<Boolean> stopped = CompletableFuture.supplyAsync(() -> pool.shutdown(Duration.ofMillis(300)));
        awaitShutdownBegun();
        clock.advance(Duration.ofMillis(300));

        assertThat(stopped.get(20, TimeUnit.SECONDS)).isFalse();
        Job job = jobs.admin().find(id).orElseThrow();
        assertThat(job.state()).as("not dead: it was stopped, it did not fail").isEqualTo(JobState.AVAILABLE);
        assertThat(job.attempt()).isZero();
        assertThat(jobs.admin().errors(id)).isEmpty();
    }

    @Test
    void noPoolThreadOutlivesShutdownEvenWhenHandlersHadToBeInterrupted() throws Exception {
        JobQueue jobs = Stores.sqlite(dir, clock);
        CountDownLatch started = new CountDownLatch(2);
        WorkerPool pool = WorkerPool.builder(jobs, "leaks").concurrency(2)
                .handler("stuck", ctx -> {
                    running.add(ctx);
                    started.countDown();
                    Thread.sleep(60_000);
                }).build();
        jobs.enqueue("leaks", "stuck", "a");
        jobs.enqueue("leaks", "stuck", "b");
        pool.start();
        assertThat(started.await(10, TimeUnit.SECONDS)).isTrue();
        assertThat(poolThreads("leaks")).isNotEmpty();

        CompletableFuture<Boolean> stopped = CompletableFuture.supplyAsync(() -> pool.shutdown(Duration.ofMillis(200)));
        awaitShutdownBegun();
        clock.advance(Duration.ofMillis(200));
        stopped.get(20, TimeUnit.SECONDS);

        // a thread may still be finishing its last instructions when shutdown returns; a leaked one stays
        Await.until("every pool thread ended", Duration.ofSeconds(5), () -> poolThreads("leaks").isEmpty());
    }

    private static List<String> poolThreads(String queue) {
        return Thread.getAllStackTraces().keySet().stream().filter(Thread::isAlive).map(Thread::getName)
                .filter(name -> name.startsWith("stagger-jobs-" + queue + "-")).toList();
    }

    /** Waits until the pool's fetcher found nothing to claim and waits for a wake-up or its next poll. */
    static void awaitIdleFetcher(String queue) throws Exception {
        Await.until("the fetcher to go idle", Duration.ofSeconds(10), () -> Thread.getAllStackTraces().keySet().stream()
                .anyMatch(t -> t.getName().equals("stagger-jobs-" + queue + "-fetcher")
                        && t.getState() == Thread.State.WAITING));
    }

    @Test
    void anEnqueueThroughTheSameQueueObjectWakesAnIdlePoolAtOnce() throws Exception {
        JobQueue jobs = Stores.sqlite(dir, clock);
        CountDownLatch ran = new CountDownLatch(1);
        try (WorkerPool pool = WorkerPool.builder(jobs, "idle").handler("t", ctx -> ran.countDown()).build().start()) {
            awaitIdleFetcher("idle"); // its next poll is on the virtual clock, which does not move
            jobs.enqueue("idle", "t", "x");
            assertThat(ran.await(10, TimeUnit.SECONDS)).as("ran without a poll").isTrue();
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
            Await.until("100 jobs done", Duration.ofSeconds(20),
                    () -> jobs.admin().countByState("q").get(JobState.SUCCEEDED) == 100);
        }
    }
}
