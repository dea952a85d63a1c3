package dev.stagger.benchmarks.jobs;

import dev.stagger.jobs.JobQueue;
import dev.stagger.jobs.JobRequest;
import dev.stagger.jobs.JobState;
import dev.stagger.jobs.WorkerPool;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;

/**
 * Drains a backlog of no-op jobs with a stagger-jobs {@link WorkerPool}, then measures idle latency.
 * With {@code keepSucceeded} false the pool keeps no successes (a SUCCEEDED retention of zero: each
 * success deletes its job), as db-scheduler and Quartz delete a finished one-time job; true keeps
 * them as SUCCEEDED, the store's default.
 */
final class StaggerJobsRun {
    private StaggerJobsRun() {
    }

    static Measurement run(String database, DataSource ds, String prefix, int jobs, int workers, int latencyJobs,
                           int latencyRate, int claimBatch, boolean keepSucceeded) throws Exception {
        Measurement m = new Measurement(keepSucceeded ? "stagger-jobs (kept)" : "stagger-jobs", database, jobs, workers);
        JobQueue queue = JobQueue.builder(ds).tablePrefix(prefix).build();

        long t0 = System.nanoTime();
        List<JobRequest> batch = new ArrayList<>(1000);
        for (int i = 0; i < jobs; i++) {
            batch.add(JobRequest.of("bench", "noop", "t"));
            if (batch.size() == 1000 || i == jobs - 1) {
                queue.enqueueAll(batch);
                batch.clear();
            }
        }
        m.enqueueSeconds = (System.nanoTime() - t0) / 1e9;

        CountDownLatch drained = new CountDownLatch(jobs);
        Measurement.Latencies latencies = new Measurement.Latencies(latencyJobs);
        WorkerPool.Builder builder = WorkerPool.builder(queue, "bench");
        if (!keepSucceeded) {
            builder.retention(JobState.SUCCEEDED, Duration.ZERO);
        }
        WorkerPool pool = builder.concurrency(workers).batchSize(claimBatch)
                .pollInterval(Duration.ofSeconds(1))
                .handler("noop", ctx -> {
                    String payload = ctx.payloadText();
                    if (payload.equals("t")) {
                        drained.countDown();
                    } else {
                        latencies.started(payload);
                    }
                }).build();
        long start = System.nanoTime();
        CpuMeter cpu = CpuMeter.start(database.equals("PostgreSQL") ? ds : null);
        pool.start();
        try {
            if (!drained.await(15, TimeUnit.MINUTES)) {
                throw new IllegalStateException("stagger-jobs did not drain " + jobs + " jobs in 15 minutes");
            }
            m.drainSeconds = (System.nanoTime() - start) / 1e9;
            cpu.stop(m, jobs);
            latencies.measure(m, latencyRate, (i, payload) -> queue.enqueue("bench", "noop", payload));
        } finally {
            pool.shutdown(Duration.ofSeconds(10));
        }
        return m;
    }
}
