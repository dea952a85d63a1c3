package dev.stagger.jobs.internal;

import dev.stagger.Clock;
import dev.stagger.EndReason;
import dev.stagger.Nesting;
import dev.stagger.RandomSource;
import dev.stagger.RetryEngine;
import dev.stagger.RetryPolicy;
import dev.stagger.RetryScope;
import dev.stagger.internal.Checks;
import dev.stagger.jobs.Job;
import dev.stagger.jobs.JobContext;
import dev.stagger.jobs.JobError;
import dev.stagger.jobs.JobHandler;
import dev.stagger.jobs.LeaseExpiredException;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.Objects;
import java.util.Optional;
import java.util.function.BooleanSupplier;
import org.jspecify.annotations.Nullable;

/**
 * Runs one claimed attempt and returns what the core {@link RetryEngine} decides of it: success,
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
    private final Nesting nesting;

    /**
     * @param shuttingDown true once the pool stops claiming
     * @param forcedStop true once a shutdown timed out and interrupted the handlers still running
     * @param nesting whether a failure a Stagger retry inside the handler decided on is retried again (RETRY_AGAIN) or not (DEFER)
     */
    public JobRunner(JobStore store, Clock clock, RandomSource random, BooleanSupplier shuttingDown,
                     BooleanSupplier forcedStop, Nesting nesting) {
        this.nesting = nesting;
        this.store = store;
        this.clock = clock;
        this.random = random;
        this.shuttingDown = shuttingDown;
        this.forcedStop = forcedStop;
    }

    public Outcome run(JobStore.Claimed claimed, JobHandler handler, RetryPolicy policy) {
        Job job = claimed.job();
        Context context = new Context(job);
        long started = clock.nanoTime();
        Throwable failure = null;
        RetryScope scope = RetryScope.open(null); // hears the Stagger retries the handler runs
        try {
            handler.handle(context);
        } catch (Throwable t) {
            failure = t;
        } finally {
            scope.close();
        }
        long runNanos = clock.nanoTime() - started;
        if (failure == null) {
            return context.snoozeMillis >= 0
                    ? Outcome.snooze(job, context.snoozeMillis, runNanos)
                    : Outcome.succeeded(job, runNanos, context.completedWithin);
        }
        if (failure instanceof InterruptedException && shuttingDown.getAsBoolean() || forcedStop.getAsBoolean()) {
            // stopped by a forced shutdown, not the job's fault: give the attempt back. Handlers often wrap the
            // interrupt (new RuntimeException(e)), so any failure after the pool interrupted its handlers counts
            // as stopped rather than as a failed attempt that could send the job to DEAD
            return Outcome.release(job);
        }
        Optional<RetryScope.Outcome> inner = nesting == Nesting.RETRY_AGAIN ? Optional.empty() : scope.decidedOn(failure);
        if (inner.isPresent()) {
            // one layer retries a failure: a retry inside the handler has decided on it
            RetryScope.Outcome o = inner.get();
            JobError error = error(job, clock.currentTimeMillis(), failure);
            return Outcome.dead(job, new JobError(error.attempt(), error.failedAt(), error.exceptionClass(), "deferred to retry '"
                    + o.retry() + "' (" + o.reason() + " after " + o.attempts() + " attempt(s)): " + error.message(),
                    error.stackTrace()), runNanos, EndReason.NOT_RETRYABLE);
        }
        return decide(claimed, policy, failure, runNanos);
    }

    /**
     * The outcome of an attempt whose worker stopped extending its lease, found by a rescue: a
     * failed attempt like any other, decided by the engine with a {@link LeaseExpiredException}
     * (the default classifier retries it, after the backoff's wait; the last attempt or the
     * deadline ends the job). Its history entry is a {@link JobError#LEASE_EXPIRED}.
     */
    public Outcome lost(JobStore.Lost lost, RetryPolicy policy) {
        JobStore.Claimed claimed = lost.claimed();
        Job job = claimed.job();
        LeaseExpiredException failure = new LeaseExpiredException(job.id(), job.attempt(), lost.owner());
        Outcome o = decide(claimed, policy, failure, 0);
        JobError error = new JobError(job.attempt(), Instant.ofEpochMilli(clock.currentTimeMillis()),
                JobError.LEASE_EXPIRED, Objects.requireNonNullElse(failure.getMessage(), ""), "");
        return new Outcome(o.kind(), job, o.delayMillis(), error, 0, false, o.backoffState(), o.endReason());
    }

    /** What the core engine decides of a failed attempt: retry after its wait, or dead with its end reason. */
    private Outcome decide(JobStore.Claimed claimed, RetryPolicy policy, Throwable failure, long runNanos) {
        Job job = claimed.job();
        long now = clock.currentTimeMillis();
        RetryEngine.Verdict verdict;
        try {
            verdict = engine(job, policy).decide(claimed.retryState(), null, failure);
        } catch (RuntimeException | Error escaped) {
            // a classifier's Error or a backoff that throws: a core call would throw it to its caller; a job has
            // none, so it ends here rather than staying RUNNING with its slot held
            failure.addSuppressed(escaped);
            return Outcome.dead(job, error(job, now, failure), runNanos, EndReason.NOT_RETRYABLE);
        }
        JobError error = error(job, now, verdict.failure().orElse(failure));
        if (!verdict.isRetry()) {
            return Outcome.dead(job, error, runNanos, verdict.endReason().orElseThrow());
        }
        long delayNanos = verdict.delay().toNanos();
        long delayMillis = delayNanos / 1_000_000 + (delayNanos % 1_000_000 == 0 ? 0 : 1); // stored times are millis
        return Outcome.retry(job, delayMillis, error, runNanos, verdict.next().orElseThrow().backoffState());
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
            snoozeMillis = StoredTimes.delayMillis("delay", delay);
        }

        @Override
        public void completeWithin(Connection connection) {
            Checks.notNull("connection", connection);
            try {
                store.completeWithin(connection, job);
            } catch (SQLException e) {
                throw StoreFailures.wrap("completeWithin of job " + job.id(), store.tables().jobs, e, false);
            }
            completedWithin = true;
        }

        @Override
        public boolean isShuttingDown() {
            return shuttingDown.getAsBoolean();
        }
    }
}
