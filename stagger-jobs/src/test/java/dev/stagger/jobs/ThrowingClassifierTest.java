package dev.stagger.jobs;

import static org.assertj.core.api.Assertions.assertThat;

import dev.stagger.Clock;
import dev.stagger.EndReason;
import dev.stagger.RetryPolicy;
import dev.stagger.testsupport.Await;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A classifier that throws ends the job as it ends a core call, and frees the handler's slot. */
class ThrowingClassifierTest {
    private static final RetryPolicy BROKEN_CLASSIFIER = RetryPolicy.builder().maxAttempts(5)
            .classifier((result, failure, context) -> {
                throw new IllegalStateException("classifier bug");
            }).build();

    @TempDir
    Path dir;

    @Test
    void aJobWhoseClassifierThrowsGoesDeadAndThePoolKeepsClaiming() throws Exception {
        JobQueue jobs = Stores.sqlite(dir, Clock.system());
        List<Long> dead = new CopyOnWriteArrayList<>();
        List<EndReason> reasons = new CopyOnWriteArrayList<>();
        JobListener listener = new JobListener() {
            @Override
            public void dead(Job job, JobError error, EndReason reason) {
                dead.add(job.id());
                reasons.add(reason);
            }
        };
        // one handler and one claimed job ahead: two leaked slots would stop the pool claiming for good
        WorkerPool pool = WorkerPool.builder(jobs, "q").concurrency(1).batchSize(1).pollInterval(Duration.ofMillis(20))
                .heartbeatInterval(Duration.ofMillis(50)).jobListener(listener)
                .handler("fails", ctx -> {
                    throw new IOException("downstream down");
                }, BROKEN_CLASSIFIER).build();
        long[] ids = new long[4];
        for (int i = 0; i < ids.length; i++) {
            ids[i] = jobs.enqueue("q", "fails", "job-" + i);
        }
        pool.start();
        try {
            Await.until("every job to go dead", Duration.ofSeconds(20), () -> dead.size() == ids.length);
        } finally {
            pool.shutdown(Duration.ofSeconds(5));
        }
        assertThat(reasons).as("as a core call with this classifier ends").containsOnly(EndReason.NOT_RETRYABLE);
        for (long id : ids) {
            Job job = jobs.admin().find(id).orElseThrow();
            assertThat(job.state()).isEqualTo(JobState.DEAD);
            assertThat(job.attempt()).isEqualTo(1);
            assertThat(jobs.admin().errors(id)).singleElement().satisfies(e -> {
                assertThat(e.exceptionClass()).isEqualTo(IOException.class.getName());
                assertThat(e.stackTrace()).contains("Suppressed: java.lang.IllegalStateException: classifier bug");
            });
        }
    }
}
