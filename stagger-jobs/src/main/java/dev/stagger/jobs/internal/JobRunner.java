package dev.stagger.jobs.internal;

import dev.stagger.AttemptContext;
import dev.stagger.Clock;
import dev.stagger.Decision;
import dev.stagger.RandomSource;
import dev.stagger.RetryPolicy;
import dev.stagger.jobs.Job;
import dev.stagger.jobs.JobContext;
import dev.stagger.jobs.JobError;
import dev.stagger.jobs.JobHandler;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.function.BooleanSupplier;

/**
 * Runs one claimed attempt and decides what becomes of the job: success, retry at
 * {@code now + backoff(attempt)} (the policy's real backoff, jitter included), dead, or snoozed.
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

    public Outcome run(Job job, JobHandler handler, RetryPolicy policy) {
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
                    : new Outcome(Outcome.Kind.SUCCEEDED, job, 0, null, runNanos, context.completedWithin);
        }
        if (failure instanceof InterruptedException && shuttingDown.getAsBoolean() || forcedStop.getAsBoolean()) {
            // stopped by a forced shutdown, not the job's fault: give the attempt back. Handlers often wrap the
            // interrupt (new RuntimeException(e)), so any failure after the pool interrupted its handlers counts
            // as stopped rather than as a failed attempt that could send the job to DEAD
            return new Outcome(Outcome.Kind.RELEASE, job, now, null, runNanos);
        }
        JobError error = new JobError(job.attempt(), Instant.ofEpochMilli(now), failure.getClass().getName(),
                ErrorText.message(failure), ErrorText.stack(failure));
        int maxAttempts = job.maxAttempts() > 0 ? job.maxAttempts() : policy.maxAttempts();
        Decision decision = policy.classifier().classify(null, failure, new Attempt(job, maxAttempts, now, failure));
        if (!decision.isRetry() || job.attempt() >= maxAttempts) {
            return new Outcome(Outcome.Kind.DEAD, job, 0, error, runNanos);
        }
        long delayNanos = Math.max(decision.minDelayNanos(),
                policy.backoff().start(random).nextDelayNanos(job.attempt()));
        long delayMillis = (delayNanos + 999_999) / 1_000_000;
        return new Outcome(Outcome.Kind.RETRY, job, now + delayMillis, error, runNanos);
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

    /** The attempt as the policy's classifier sees it. */
    private record Attempt(Job job, int maxAttempts, long nowMillis, Throwable lastFailure) implements AttemptContext {
        @Override
        public String name() {
            return job.queue() + "/" + job.type();
        }

        @Override
        public int attempt() {
            return job.attempt();
        }

        @Override
        public Duration elapsed() {
            return Duration.ofMillis(Math.max(0, nowMillis - job.createdAt().toEpochMilli()));
        }

        @Override
        public Optional<Duration> remaining() {
            return Optional.empty();
        }

        @Override
        public Optional<Duration> attemptTimeout() {
            return Optional.empty();
        }
    }
}
