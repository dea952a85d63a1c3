package dev.stagger.jobs;

import dev.stagger.EndReason;
import dev.stagger.RetryListener;
import java.time.Duration;
import java.time.Instant;
import org.jspecify.annotations.Nullable;

/**
 * Hears what workers do with jobs, so metrics and logs can be added without this module depending
 * on a logging or metrics library (stagger-observability's {@code JobTelemetry} is one). Called on
 * the pool's threads after the change is stored; must be quick and thread-safe. An exception
 * thrown by a listener is ignored.
 */
public interface JobListener {

    /** A handler is about to run {@code job} (attempt {@link Job#attempt()}). */
    default void started(Job job) {
    }

    /**
     * Called on the handler's thread just after {@link #started}, as the handler is invoked; what it
     * returns, when not null, is closed on that thread once the handler has returned or thrown and
     * the engine has decided what follows (before the outcome is stored, so the outcome events
     * follow it, on another thread). A tracer makes the attempt's span the current one here, so the spans the handler
     * starts (an HTTP client's) are its children. A {@link RuntimeException} from it is ignored
     * (the handler runs without a scope); so is one from the scope's {@code close}.
     */
    default RetryListener.@Nullable Scope running(Job job) {
        return null;
    }

    /**
     * A job this pool claimed was given back unfinished, and the attempt does not count: the pool
     * stopped before or while it ran, or its lease was lost (whoever holds the job now reports it).
     * No outcome event follows for it.
     */
    default void released(Job job) {
    }

    /** The job completed; {@code runTime} is the handler's run time. */
    default void succeeded(Job job, Duration runTime) {
    }

    /** The attempt failed with a retryable error; the job runs again at {@code nextRunAt}. */
    default void retried(Job job, JobError error, Instant nextRunAt) {
    }

    /**
     * The job ended without succeeding, for {@code reason}: the end reason a core
     * {@link dev.stagger.Retry} call with the same policy would give — EXHAUSTED (out of attempts),
     * NOT_RETRYABLE (the classifier said stop, or threw), DEADLINE (the next wait would pass the
     * policy's deadline, counted from the job's first attempt) or INTERRUPTED.
     */
    default void dead(Job job, JobError error, EndReason reason) {
    }

    /** The handler snoozed the job until {@code runAt}. */
    default void snoozed(Job job, Instant runAt) {
    }

    /**
     * A job whose worker stopped extending its lease was taken back by this pool: its attempt
     * failed with a {@link LeaseExpiredException} ({@code error} is its {@link JobError#LEASE_EXPIRED}
     * entry), decided like any failure. {@code newState} is AVAILABLE (to run again after the
     * policy's wait) or DEAD, in which case {@link #dead} follows.
     */
    default void rescued(Job job, JobError error, JobState newState) {
    }

    /** The pool's purge schedule deleted {@code deleted} jobs of {@code queue} in {@code state}. */
    default void purged(String queue, JobState state, int deleted) {
    }

    /** The pool measured its queue (every {@code statsInterval}): depth by state and lag. */
    default void measured(QueueStats stats) {
    }

    /** The pool's database work failed and will be retried after {@code backoff}. */
    default void databaseError(Exception error, Duration backoff) {
    }
}
