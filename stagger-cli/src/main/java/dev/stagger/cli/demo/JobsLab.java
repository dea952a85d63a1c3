package dev.stagger.cli.demo;

import com.fasterxml.jackson.databind.JsonNode;
import dev.stagger.Backoff;
import dev.stagger.Jitter;
import dev.stagger.RetryPolicy;
import dev.stagger.jdbc.SqliteDataSource;
import dev.stagger.jobs.EnqueueOptions;
import dev.stagger.jobs.Job;
import dev.stagger.jobs.JobError;
import dev.stagger.jobs.JobQueue;
import dev.stagger.jobs.JobState;
import dev.stagger.jobs.WorkerPool;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import org.jspecify.annotations.Nullable;

/**
 * Panel 5: durable jobs in a SQLite file. Each job calls a flaky dependency; failures are
 * rescheduled at now + backoff with jitter, and after the last attempt the job goes DEAD with its
 * error history. Re-driving first "fixes" the dependency, so re-driven jobs succeed.
 */
final class JobsLab implements AutoCloseable {
    private static final String QUEUE = "demo";
    private static final String TYPE = "call-dependency";

    /** Attempts per job, the first included, before it goes DEAD (the pool's policy). */
    static final int MAX_ATTEMPTS = 4;

    private final JobQueue jobs;
    private final WorkerPool pool;
    private volatile double dependencyFailureRate = 0.5;

    JobsLab(Path dataDir) {
        jobs = JobQueue.builder(SqliteDataSource.file(dataDir.resolve("jobs.db"))).build();
        pool = WorkerPool.builder(jobs, QUEUE)
                .concurrency(4)
                .pollInterval(Duration.ofMillis(200))
                .policy(RetryPolicy.builder().maxAttempts(MAX_ATTEMPTS)
                        .backoff(Backoff.exponential(Duration.ofMillis(500)).maxDelay(Duration.ofSeconds(4)).jitter(Jitter.equal()))
                        .build())
                .handler(TYPE, ctx -> {
                    Thread.sleep(20); // the call itself
                    if (ThreadLocalRandom.current().nextDouble() < dependencyFailureRate) {
                        throw new IOException("dependency answered 503");
                    }
                })
                .build()
                .start();
    }

    record Enqueued(int enqueued, double failureRate) {
    }

    Enqueued enqueue(JsonNode r) {
        int count = Json.intField(r, "count", 20, 1, 200);
        dependencyFailureRate = Json.doubleField(r, "failureRate", 0.5, 0, 1);
        for (int i = 0; i < count; i++) {
            jobs.enqueue(QUEUE, TYPE, "{\"n\":" + i + "}", EnqueueOptions.defaults());
        }
        return new Enqueued(count, dependencyFailureRate);
    }

    record Redriven(int redriven) {
    }

    Redriven redrive(JsonNode r) {
        dependencyFailureRate = 0; // the dependency was fixed; now the dead jobs can go through
        return new Redriven(jobs.admin().redriveAll(QUEUE));
    }

    /**
     * One job as the page shows it: {@code attempt} "2 of 4"; {@code nextRunInMs} only for a job
     * waiting to run (null once it is running or finished); {@code history} every attempt across
     * re-drives; {@code lastError} only while the job has not succeeded.
     */
    record Row(long id, String state, String attempt, @Nullable Long nextRunInMs, String history,
               @Nullable String lastError) {
    }

    record Listing(Map<String, Long> counts, List<Row> jobs, double failureRate, int maxAttempts) {
    }

    Listing list(JsonNode r) {
        Map<String, Long> counts = new LinkedHashMap<>();
        Map<JobState, Long> byState = jobs.admin().countByState(QUEUE);
        for (JobState s : JobState.values()) {
            counts.put(s.name(), byState.getOrDefault(s, 0L));
        }
        List<Job> recent = new ArrayList<>();
        for (JobState s : List.of(JobState.DEAD, JobState.RUNNING, JobState.AVAILABLE, JobState.SUCCEEDED)) {
            recent.addAll(jobs.admin().list(s, QUEUE, 15));
        }
        recent.sort(Comparator.comparingLong(Job::id).reversed());
        long now = System.currentTimeMillis();
        List<Row> rows = new ArrayList<>();
        for (Job j : recent.subList(0, Math.min(25, recent.size()))) {
            List<JobError> errors = jobs.admin().errors(j.id());
            String last = errors.isEmpty() || j.state() == JobState.SUCCEEDED ? null : errors.get(errors.size() - 1).message();
            Long next = j.state() == JobState.AVAILABLE ? Math.max(0, j.runAt().toEpochMilli() - now) : null;
            String history = JobHistory.describe(errors.stream().map(JobError::attempt).toList(), j.state(), j.attempt());
            int limit = j.maxAttempts() > 0 ? j.maxAttempts() : MAX_ATTEMPTS; // the job's own limit, else the pool's policy
            rows.add(new Row(j.id(), j.state().name(), j.attempt() + " of " + limit, next, history, last));
        }
        return new Listing(counts, rows, dependencyFailureRate, MAX_ATTEMPTS);
    }

    @Override
    public void close() {
        pool.close();
    }
}
