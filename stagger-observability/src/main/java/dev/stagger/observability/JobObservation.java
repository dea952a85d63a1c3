package dev.stagger.observability;

import dev.stagger.EndReason;
import dev.stagger.RetryListener;
import dev.stagger.jobs.Job;
import dev.stagger.jobs.JobError;
import dev.stagger.jobs.JobListener;
import dev.stagger.jobs.JobState;
import dev.stagger.jobs.QueueStats;
import io.micrometer.observation.ObservationRegistry;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import org.jspecify.annotations.Nullable;

/**
 * Micrometer {@link io.micrometer.observation.Observation}s for durable jobs: each handler run is a
 * call observation ({@value RetryObservation#CALL}, contextual name {@code job <queue>/<type>}) with
 * one attempt child ({@value RetryObservation#ATTEMPT}), with {@link RetryObservation}'s keys:
 * {@value RetryObservation#NAME} is {@code <queue>/<type>}; the attempt carries its number in the
 * job's life and the attempts before it, the verdict ({@code retry}, {@code stop}, {@code accept}),
 * {@value RetryObservation#DECISION} ({@code retry}, {@code success}, {@code recovered}, the end
 * reason of a job that went dead, {@code snoozed}, {@code released}) and {@code error.type} (the
 * failure's class); the call carries {@value RetryObservation#REASON} ({@code rescheduled} when the
 * job runs again later, else the decision), the wait before the next attempt as an event, and the
 * job id as the high-cardinality key {@value #JOB_ID}. A job's attempts are often hours and
 * processes apart, so each run is its own call; the attempt's number says where it was.
 *
 * <p>While the handler runs, its attempt is the current observation on the handler's thread, so
 * the spans the handler starts (an HTTP client's, a Stagger {@code Retry}'s) are its children. One
 * line attaches it; {@link #andThen} keeps another listener (the meters):
 *
 * <pre>{@code
 * WorkerPool pool = WorkerPool.builder(jobs, "mail").handler("send-receipt", handler)
 *         .jobListener(JobObservation.of(observationRegistry).andThen(JobTelemetry.of(meterRegistry)))
 *         .build();
 * }</pre>
 */
public final class JobObservation implements JobListener {
    /** High-cardinality key on the call: the job's id. */
    public static final String JOB_ID = "stagger.job.id";

    private static final JobListener NONE = new JobListener() {
    };

    private final ObservationRegistry registry;
    private final JobListener next;
    /** The runs of this process whose outcome is not yet stored, by job id. */
    private final Map<Long, DurableRun> runs = new ConcurrentHashMap<>();

    private JobObservation(ObservationRegistry registry, JobListener next) {
        this.registry = registry;
        this.next = next;
    }

    /** Observes job runs into {@code registry}. */
    public static JobObservation of(ObservationRegistry registry) {
        return new JobObservation(Objects.requireNonNull(registry, "registry"), NONE);
    }

    /**
     * This observation, also handing every event to {@code listener} after its own work (a pool has
     * one listener); replaces the listener an earlier {@code andThen} gave.
     */
    public JobObservation andThen(JobListener listener) {
        return new JobObservation(registry, Objects.requireNonNull(listener, "listener"));
    }

    @Override
    public RetryListener.@Nullable Scope running(Job job) {
        RetryListener.Scope other = next.running(job);
        if (registry.isNoop()) {
            return other;
        }
        DurableRun run = new DurableRun(registry, "job", job.queue() + "/" + job.type(), job.attempt(),
                JOB_ID, Long.toString(job.id()));
        DurableRun earlier = runs.put(job.id(), run);
        if (earlier != null) {
            earlier.end(null, "released", "released", job.attempt() - 1, null); // never heard its outcome
        }
        if (other == null) {
            return run::leave;
        }
        return () -> {
            run.leave(); // opened last, closed first
            other.close();
        };
    }

    @Override
    public void started(Job job) {
        next.started(job);
    }

    @Override
    public void succeeded(Job job, Duration runTime) {
        DurableRun run = runs.remove(job.id());
        if (run != null) {
            String reason = DurableRun.succeeded(job.attempt());
            run.end("accept", reason, reason, job.attempt(), null);
        }
        next.succeeded(job, runTime);
    }

    @Override
    public void retried(Job job, JobError error, Instant nextRunAt) {
        DurableRun run = runs.remove(job.id());
        if (run != null) {
            run.waitBefore(Duration.between(error.failedAt(), nextRunAt), job.attempt() + 1);
            run.end("retry", "retry", DurableRun.RESCHEDULED, job.attempt(), error.exceptionClass());
        }
        next.retried(job, error, nextRunAt);
    }

    @Override
    public void dead(Job job, JobError error, EndReason reason) {
        DurableRun run = runs.remove(job.id());
        if (run != null) {
            String why = DurableRun.lower(reason);
            run.end(reason == EndReason.EXHAUSTED || reason == EndReason.DEADLINE ? "retry" : "stop", why, why,
                    job.attempt(), error.exceptionClass());
        }
        next.dead(job, error, reason);
    }

    @Override
    public void snoozed(Job job, Instant runAt) {
        DurableRun run = runs.remove(job.id());
        if (run != null) {
            run.end("accept", "snoozed", DurableRun.RESCHEDULED, job.attempt(), null);
        }
        next.snoozed(job, runAt);
    }

    @Override
    public void rescued(Job job, JobError error, JobState newState) {
        if (newState == JobState.AVAILABLE) { // else dead() follows
            DurableRun run = runs.remove(job.id());
            if (run != null) {
                run.end("retry", "retry", DurableRun.RESCHEDULED, job.attempt(), error.exceptionClass());
            }
        }
        next.rescued(job, error, newState);
    }

    @Override
    public void released(Job job) {
        DurableRun run = runs.remove(job.id());
        if (run != null) {
            run.end(null, "released", "released", job.attempt() - 1, null);
        }
        next.released(job);
    }

    @Override
    public void purged(String queue, JobState state, int deleted) {
        next.purged(queue, state, deleted);
    }

    @Override
    public void measured(QueueStats stats) {
        next.measured(stats);
    }

    @Override
    public void databaseError(Exception error, Duration backoff) {
        next.databaseError(error, backoff);
    }

    @Override
    public String toString() {
        return "JobObservation{" + registry + (next == NONE ? "" : ", then " + next) + "}";
    }
}
