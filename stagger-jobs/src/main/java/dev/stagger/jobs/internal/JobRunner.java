package dev.stagger.jobs.internal;

import dev.stagger.Clock;
import dev.stagger.EndReason;
import dev.stagger.RandomSource;
import dev.stagger.RetryEngine;
import dev.stagger.RetryPolicy;
import dev.stagger.jobs.Job;
import dev.stagger.jobs.JobContext;
import dev.stagger.jobs.JobError;
import dev.stagger.jobs.JobHandler;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.function.BooleanSupplier;

/**
 * Runs one claimed attempt and stores what the core {@link RetryEngine} decides of it: success,
 * retry at {@code now + wait} (the wait a core call would make: the policy's backoff with its
 * jitter, continuing the job's own schedule, plus any {@code retryAfter} hint), dead with the end
 * reason a core call would give (EXHAUSTED, NOT_RETRYABLE, DEADLINE, INTERRUPTED), or snoozed.
 * The job's retry state (attempt, first attempt's start, backoff state) travels on its row.
 */
public final class JobRunner {
    private final JobStore store;
    private final Clock clock;
    private final RandomSource random;
    private final BooleanSupplier shuttingDown;
    private final BooleanSupplier forcedStop;

    /**
     * @param shuttingDown true once the pool stops claiming
     * @param forcedStop true once a shutdown timed out and interrupted the handlers still running
     */
    public JobRunner(JobStore store, Clock clock, RandomSource random, BooleanSupplier shuttingDown,
                     BooleanSupplier forcedStop) {
        this.store = store;
        this.clock = clock;
        this.random = random;
        this.shuttingDown = shuttingDown;
        this.forcedStop = forcedStop;
    }

    public Outcome run(JobStore.Claimed claimed, JobHandler handler, RetryPolicy policy) {
        Job job = claimed.job();
        Context context = new Context(job);
        long started = System.nanoTime();
        Throwable failure = null;
        try {
            handler.handle(context);
        } catch (Throwable t) {
            failure = t;
        }
        long runNanos = System.nanoTime() - started;
        long now = clock.currentTimeMillis();
        if (failure == null) {
            return context.snoozeMillis >= 0
                    ? new Outcome(Outcome.Kind.SNOOZE, job, now + context.snoozeMillis, null, runNanos)
                    : new Outcome(Outcome.Kind.SUCCEEDED, job, 0, null, runNanos, context.completedWithin, 0, null);
        }
        if (failure instanceof InterruptedException && shuttingDown.getAsBoolean() || forcedStop.getAsBoolean()) {
            // stopped by a forced shutdown, not the job's fault: give the attempt back. Handlers often wrap the
            // interrupt (new RuntimeException(e)), so any failure after the pool interrupted its handlers counts
            // as stopped rather than as a failed attempt that could send the job to DEAD
            return new Outcome(Outcome.Kind.RELEASE, job, now, null, runNanos);
        }
        RetryEngine.Verdict verdict;
        try {
            verdict = engine(job, policy).decide(claimed.retryState(), null, failure);
        } catch (RuntimeException | Error escaped) {
            // a classifier's Error or a backoff that throws: a core call would throw it to its caller; a job has
            // none, so it ends here rather than staying RUNNING with its slot held
            failure.addSuppressed(escaped);
            return new Outcome(Outcome.Kind.DEAD, job, 0, error(job, now, failure), runNanos, false, 0,
                    EndReason.NOT_RETRYABLE);
        }
        JobError error = error(job, now, verdict.failure().orElse(failure));
        if (!verdict.isRetry()) {
            return new Outcome(Outcome.Kind.DEAD, job, 0, error, runNanos, false, 0, verdict.endReason().orElseThrow());
        }
        long delayNanos = verdict.delay().toNanos();
        long delayMillis = delayNanos / 1_000_000 + (delayNanos % 1_000_000 == 0 ? 0 : 1); // stored times are millis
        return new Outcome(Outcome.Kind.RETRY, job, now + delayMillis, error, runNanos, false,
                verdict.next().orElseThrow().backoffState(), null);
    }

    /** The engine for one job: its policy, named {@code queue/type}, with the job's own attempt limit if it has one. */
    private RetryEngine engine(Job job, RetryPolicy policy) {
        RetryEngine engine = RetryEngine.of(job.queue() + "/" + job.type(), policy).withClock(clock).withRandom(random);
        return job.maxAttempts() > 0 ? engine.withMaxAttempts(job.maxAttempts()) : engine;
    }

    private static JobError error(Job job, long now, Throwable failure) {
        return new JobError(job.attempt(), Instant.ofEpochMilli(now), failure.getClass().getName(),
                ErrorText.message(failure), ErrorText.stack(failure));
    }

    private final class Context implements JobContext {
        private final Job job;
        private long snoozeMillis = -1;
        private boolean completedWithin;

        Context(Job job) {
            this.job = job;
        }

        @Override
        public Job job() {
            return job;
        }

        @Override
        public void snooze(Duration delay) {
            if (delay == null || delay.isNegative()) {
                throw new IllegalArgumentException("delay must not be negative, got " + delay);
            }
            snoozeMillis = delay.toMillis();
        }

        @Override
        public void completeWithin(Connection connection) throws SQLException {
            store.completeWithin(connection, job, clock.currentTimeMillis());
            completedWithin = true;
        }

        @Override
        public boolean isShuttingDown() {
            return shuttingDown.getAsBoolean();
        }
    }
}
