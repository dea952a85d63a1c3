package dev.stagger.jobs;

import static org.assertj.core.api.Assertions.assertThat;

import dev.stagger.Clock;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A pool claims only jobs it can start now: the rest stay for other workers. */
class NoHoardingTest {
    @TempDir
    Path dir;

    @Test
    void aBusyPoolLeavesJobsItCannotStartForOtherWorkers() throws Exception {
        JobQueue jobs = Stores.sqlite(dir, Clock.system());
        CountDownLatch started = new CountDownLatch(2);
        CountDownLatch release = new CountDownLatch(1);
        WorkerPool busy = WorkerPool.builder(jobs, "q").concurrency(2).batchSize(4).pollInterval(Duration.ofMillis(20))
                .handler("long", ctx -> {
                    started.countDown();
                    release.await(30, TimeUnit.SECONDS);
                }).build();
        for (int i = 0; i < 6; i++) {
            jobs.enqueue("q", "long", "job-" + i);
        }
        busy.start();
        try {
            assertThat(started.await(10, TimeUnit.SECONDS)).isTrue();
            assertThat(jobs.admin().countByState("q").get(JobState.RUNNING)).as("claimed by the busy pool").isEqualTo(2);
            assertThat(jobs.admin().countByState("q").get(JobState.AVAILABLE)).isEqualTo(4);
        } finally {
            release.countDown();
            busy.shutdown(Duration.ofSeconds(10));
        }
    }
}
