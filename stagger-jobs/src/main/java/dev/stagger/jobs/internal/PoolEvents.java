package dev.stagger.jobs.internal;

import dev.stagger.Clock;
import dev.stagger.EndReason;
import dev.stagger.RetryListener;
import dev.stagger.jobs.Job;
import dev.stagger.jobs.JobListener;
import dev.stagger.jobs.JobState;
import dev.stagger.jobs.QueueStats;
import java.time.Duration;
import java.time.Instant;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;

/**
 * A pool's events, handed to the user's {@link JobListener}; an exception thrown by it is
 * dropped, since a listener must not break the pool. Thread-safe if the listener is.
 */
public final class PoolEvents {
    private final JobListener listener;
    private final Clock clock;

    public PoolEvents(JobListener listener, Clock clock) {
        this.listener = listener;
        this.clock = clock;
    }

    /** What became of an attempt, once its outcome was stored ({@code applied}) or found lost. */
    public void stored(Outcome o, boolean applied) {
        if (!applied && !(o.kind() == Outcome.Kind.SUCCEEDED && o.completedWithin())) {
            emit(l -> l.released(o.job())); // the lease was lost: whoever holds the job now reports it
            return;
        }
        Job job = o.job();
        switch (o.kind()) {
            case SUCCEEDED -> emit(l -> l.succeeded(job, Duration.ofNanos(o.runNanos())));
            case RETRY -> emit(l -> l.retried(job, o.failure(), later(o.delayMillis())));
            case DEAD -> emit(l -> l.dead(job, o.failure(), o.deadReason()));
            case SNOOZE -> emit(l -> l.snoozed(job, later(o.delayMillis())));
            case RELEASE -> emit(l -> l.released(job)); // put back unstarted or interrupted at shutdown
        }
    }

    /** A job of another (or this) worker taken back after its lease expired. */
    public void rescued(Outcome o) {
        JobState state = o.kind() == Outcome.Kind.DEAD ? JobState.DEAD : JobState.AVAILABLE;
        emit(l -> l.rescued(o.job(), o.failure(), state));
        if (state == JobState.DEAD) {
            EndReason reason = o.deadReason();
            emit(l -> l.dead(o.job(), o.failure(), reason));
        }
    }

    public void started(Job job) {
        emit(l -> l.started(job));
    }

    /** The listener's scope around the handler's run of {@code job}, or null. */
    public RetryListener.@Nullable Scope running(Job job) {
        try {
            return listener.running(job);
        } catch (RuntimeException ignored) {
            return null; // a listener must not break the pool
        }
    }

    /** Closes what {@link #running} opened. */
    public static void close(RetryListener.@Nullable Scope scope) {
        if (scope == null) {
            return;
        }
        try {
            scope.close();
        } catch (RuntimeException ignored) {
            // a listener must not break the pool
        }
    }

    public void purged(String queue, JobState state, int deleted) {
        emit(l -> l.purged(queue, state, deleted));
    }

    public void measured(QueueStats stats) {
        emit(l -> l.measured(stats));
    }

    public void databaseError(Exception error, Duration backoff) {
        emit(l -> l.databaseError(error, backoff));
    }

    private Instant later(long delayMillis) {
        return Instant.ofEpochMilli(clock.currentTimeMillis()).plusMillis(delayMillis);
    }

    private void emit(Consumer<JobListener> event) {
        try {
            event.accept(listener);
        } catch (RuntimeException ignored) {
            // a listener must not break the pool
        }
    }
}
