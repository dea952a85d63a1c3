package dev.stagger.jobs;

import dev.stagger.jdbc.internal.Echo;
import dev.stagger.jobs.internal.StoredTimes;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * Per-job options for {@link JobQueue#enqueue}. Immutable; start from {@link #defaults()} and
 * chain: {@code EnqueueOptions.defaults().key("order-42").delay(Duration.ofMinutes(5))}.
 */
public final class EnqueueOptions {
    private static final EnqueueOptions DEFAULTS = new EnqueueOptions(null, null, null, 0, 0);

    private final @Nullable String key;
    private final @Nullable Instant runAt;
    private final @Nullable Duration delay;
    private final int maxAttempts;
    private final int priority;

    private EnqueueOptions(@Nullable String key, @Nullable Instant runAt, @Nullable Duration delay, int maxAttempts,
            int priority) {
        this.key = key;
        this.runAt = runAt;
        this.delay = delay;
        this.maxAttempts = maxAttempts;
        this.priority = priority;
    }

    /** No key, run now, the worker's policy decides the attempts, priority 0. */
    public static EnqueueOptions defaults() {
        return DEFAULTS;
    }

    /**
     * A unique job key: while a job with this key is stored (any state, until purged), enqueueing
     * another with the same key adds nothing and returns the existing job's id. Use the event's
     * id so a redelivered event is processed once.
     */
    public EnqueueOptions key(String key) {
        return new EnqueueOptions(Names.key(key), runAt, delay, maxAttempts, priority);
    }

    /**
     * Run no earlier than this instant (compared with the store's clock, see
     * {@link JobQueue.Builder#databaseClock}); an instant in the past runs now. Within the years
     * 0 to 9999. Replaces any {@link #delay}.
     */
    public EnqueueOptions runAt(Instant runAt) {
        return new EnqueueOptions(key, StoredTimes.instant("runAt", runAt), null, maxAttempts, priority);
    }

    /**
     * Run no earlier than this long after enqueue (by the store's clock). At most 1,000 years.
     * Replaces any {@link #runAt}.
     */
    public EnqueueOptions delay(Duration delay) {
        StoredTimes.delayMillis("delay", delay);
        return new EnqueueOptions(key, null, delay, maxAttempts, priority);
    }

    /** Total attempts for this job, overriding the worker's retry policy; at least 1. */
    public EnqueueOptions maxAttempts(int maxAttempts) {
        if (maxAttempts < 1) {
            throw new IllegalArgumentException("maxAttempts must be at least 1, got " + maxAttempts);
        }
        return new EnqueueOptions(key, runAt, delay, maxAttempts, priority);
    }

    /**
     * Among due jobs of one queue, higher priority runs first; default 0, may be negative. On
     * PostgreSQL a pool claiming back to back continues after the last job it claimed; a job that
     * ranks ahead of it is seen by the next claim when its enqueue wakes the pool (through the
     * pool's own {@link JobQueue}, or by the NOTIFY every PostgreSQL enqueue sends), else within
     * 50 ms or once the priority being worked through runs out (stagger-jobs README, "Throughput").
     */
    public EnqueueOptions priority(int priority) {
        return new EnqueueOptions(key, runAt, delay, maxAttempts, priority);
    }

    /** The unique key, if one is set. */
    public Optional<String> key() {
        return Optional.ofNullable(key);
    }

    /** The absolute run-at time, if one is set. */
    public Optional<Instant> runAt() {
        return Optional.ofNullable(runAt);
    }

    /** The delay after enqueue, if one is set. */
    public Optional<Duration> delay() {
        return Optional.ofNullable(delay);
    }

    /** The unique key as stored: null for none. */
    @Nullable String storedKey() {
        return key;
    }

    /** The job's own attempt limit, 0 when the worker's policy decides. */
    public int maxAttempts() {
        return maxAttempts;
    }

    public int priority() {
        return priority;
    }

    /** The absolute run-at time in epoch milliseconds, or null when the job runs a delay after enqueue. */
    @Nullable Long runAtMillis() {
        return runAt == null ? null : runAt.toEpochMilli();
    }

    /** The delay after enqueue in milliseconds (0 without one). */
    long delayMillis() {
        return delay == null ? 0 : delay.toMillis();
    }

    @Override
    public String toString() {
        return "EnqueueOptions{key=" + (key == null ? null : Echo.of(key)) + ", runAt=" + runAt + ", delay=" + delay + ", maxAttempts=" + maxAttempts
                + ", priority=" + priority + "}";
    }
}
