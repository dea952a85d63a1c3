package dev.stagger.jobs;

import java.time.Duration;
import java.time.Instant;

/**
 * Per-job options for {@link JobQueue#enqueue}. Immutable; start from {@link #defaults()} and
 * chain: {@code EnqueueOptions.defaults().key("order-42").delay(Duration.ofMinutes(5))}.
 */
public final class EnqueueOptions {
    private static final EnqueueOptions DEFAULTS = new EnqueueOptions(null, null, null, 0, 0);

    private final String key;
    private final Instant runAt;
    private final Duration delay;
    private final int maxAttempts;
    private final int priority;

    private EnqueueOptions(String key, Instant runAt, Duration delay, int maxAttempts, int priority) {
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
        if (key == null || key.isBlank() || key.length() > 300) {
            throw new IllegalArgumentException("key must be 1 to 300 non-blank characters, got '" + key + "'");
        }
        return new EnqueueOptions(key, runAt, delay, maxAttempts, priority);
    }

    /** Run no earlier than this instant. Replaces any {@link #delay}. */
    public EnqueueOptions runAt(Instant runAt) {
        if (runAt == null) {
            throw new IllegalArgumentException("runAt must not be null");
        }
        return new EnqueueOptions(key, runAt, null, maxAttempts, priority);
    }

    /** Run no earlier than this long after enqueue (by the queue's clock). Replaces any {@link #runAt}. */
    public EnqueueOptions delay(Duration delay) {
        if (delay == null || delay.isNegative()) {
            throw new IllegalArgumentException("delay must not be negative, got " + delay);
        }
        return new EnqueueOptions(key, null, delay, maxAttempts, priority);
    }

    /** Total attempts for this job, overriding the worker's retry policy; at least 1. */
    public EnqueueOptions maxAttempts(int maxAttempts) {
        if (maxAttempts < 1) {
            throw new IllegalArgumentException("maxAttempts must be at least 1, got " + maxAttempts);
        }
        return new EnqueueOptions(key, runAt, delay, maxAttempts, priority);
    }

    /** Among due jobs of one queue, higher priority runs first; default 0, may be negative. */
    public EnqueueOptions priority(int priority) {
        return new EnqueueOptions(key, runAt, delay, maxAttempts, priority);
    }

    /** The unique key, or null. */
    public String key() {
        return key;
    }

    /** The absolute run-at time, or null. */
    public Instant runAt() {
        return runAt;
    }

    /** The delay after enqueue, or null. */
    public Duration delay() {
        return delay;
    }

    /** The job's own attempt limit, 0 when the worker's policy decides. */
    public int maxAttempts() {
        return maxAttempts;
    }

    public int priority() {
        return priority;
    }

    /** Epoch millisecond at which the job becomes due, given the enqueue time {@code nowMillis}. */
    long runAtMillis(long nowMillis) {
        if (runAt != null) {
            return runAt.toEpochMilli();
        }
        if (delay != null) {
            return nowMillis + Math.min(delay.toMillis(), Long.MAX_VALUE - nowMillis);
        }
        return nowMillis;
    }

    @Override
    public String toString() {
        return "EnqueueOptions{key=" + key + ", runAt=" + runAt + ", delay=" + delay + ", maxAttempts=" + maxAttempts
                + ", priority=" + priority + "}";
    }
}
