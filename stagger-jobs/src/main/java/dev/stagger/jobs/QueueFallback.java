package dev.stagger.jobs;

import dev.stagger.EndReason;
import dev.stagger.Fallback;
import dev.stagger.Retry;
import dev.stagger.RetryPolicy;
import dev.stagger.internal.Checks;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.EnumSet;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * A fallback of kind "queue": when a call cannot be done now (breaker open, budget spent,
 * deadline, attempts exhausted, refused by the adaptive throttle), the work is enqueued to a
 * durable {@link JobQueue} under a job key and the caller gets a {@link Deferred} answer to show
 * ("we will place your order as soon as we can"). A {@link WorkerPool} later runs the real operation from the job's payload, with
 * the background policy ({@link #workerPool(JobHandler)}).
 * <pre>{@code
 * QueueFallback orders = QueueFallback.builder(jobQueue, "orders", "place-order").build();
 * Deferrable<Receipt> answer = orders.call(retry, "order-" + order.id(), order.toJson(),
 *         () -> warehouse.place(order));
 * if (answer.isDeferred()) {
 *     page.show("Your order is queued; we will confirm it by e-mail.");
 * }
 * WorkerPool workers = orders.workerPool(job -> warehouse.place(Order.fromJson(job.payloadText()))).build().start();
 * }</pre>
 *
 * <p>Repeated fallbacks for one key (a user pressing "order" again, concurrent requests, a
 * retried HTTP request) enqueue one job between them: the job key is unique in the store, and
 * every one of them answers with that job's id. A call the {@link dev.stagger.AdaptiveThrottle}
 * refused (THROTTLED) is queued by default: it was refused locally and its work was not done (not
 * even sent, on a first attempt), exactly the work that can wait for the backend to recover. A
 * permanent failure (NOT_RETRYABLE) is not queued by default, since running it again later would
 * fail again; {@link Builder#reasons} chooses otherwise. When the enqueue itself fails, the call
 * fails with the store's {@link dev.stagger.jdbc.StoreException}, the call's own failure
 * suppressed on it.
 *
 * <p>The enqueue is a database write on the thread that ended the call: for
 * {@link #callAsync}, the thread that completed the last attempt. Immutable and thread-safe.
 */
public final class QueueFallback {
    /** The kind reported on events and metrics. */
    public static final String KIND = "queue";

    private final JobQueue jobs;
    private final String queue;
    private final String type;
    private final Duration delay;
    private final int maxAttempts;
    private final EndReason[] reasons;

    private QueueFallback(Builder b) {
        this.jobs = b.jobs;
        this.queue = b.queue;
        this.type = b.type;
        this.delay = b.delay;
        this.maxAttempts = b.maxAttempts;
        this.reasons = b.reasons.toArray(new EndReason[0]);
    }

    /** Work of job type {@code type} is deferred to {@code queue} in {@code jobs}. */
    public static Builder builder(JobQueue jobs, String queue, String type) {
        return new Builder(Checks.notNull("jobs", jobs), Names.name("queue", queue), Names.name("type", type));
    }

    public String queue() {
        return queue;
    }

    public String type() {
        return type;
    }

    /**
     * Runs {@code operation} under {@code retry}; when the call ends for one of the chosen
     * reasons, enqueues {@code payload} under {@code key} and answers deferred. Other ends go to
     * {@code retry}'s own fallback, if any, or fail as without one.
     */
    public <T> Deferrable<T> call(Retry retry, String key, String payload, Callable<? extends T> operation)
            throws Exception {
        Checks.notNull("retry", retry);
        Checks.notNull("operation", operation);
        Handover handover = new Handover(key, payload);
        Object answer = withQueue(retry, handover).call(operation::call);
        return settle(answer, handover);
    }

    /** As {@link #call} for an asynchronous operation. */
    public <T> CompletableFuture<Deferrable<T>> callAsync(Retry retry, String key, String payload,
                                                         Supplier<? extends CompletionStage<T>> operation) {
        Checks.notNull("retry", retry);
        Checks.notNull("operation", operation);
        Handover handover = new Handover(key, payload);
        CompletableFuture<Object> answer = withQueue(retry, handover)
                .callAsync(() -> operation.get().thenApply(value -> (Object) value));
        return answer.thenApply(value -> settle(value, handover));
    }

    /** Enqueues {@code payload} under {@code key} now (once per key) and answers deferred. */
    public Deferred defer(String key, String payload, EndReason reason) {
        Checks.notNull("reason", reason);
        return new Handover(key, payload).enqueue(reason);
    }

    /**
     * A worker pool builder for this queue whose handler for this type runs the real operation
     * with {@link RetryPolicy#background()}: patient, hours-long retries, as deferred work wants.
     */
    public WorkerPool.Builder workerPool(JobHandler handler) {
        Checks.notNull("handler", handler);
        return WorkerPool.builder(jobs, queue).handler(type, handler, RetryPolicy.background());
    }

    private Retry withQueue(Retry retry, Handover handover) {
        Fallback<Object> mine = Fallback.<Object>of(context -> handover.enqueue(context.reason()))
                .withKind(KIND).withReasons(reasons);
        @SuppressWarnings("unchecked")
        Fallback<Object> own = (Fallback<Object>) retry.fallback().orElse(null);
        return retry.withFallback(own == null ? mine : mine.orElse(own));
    }

    @SuppressWarnings("unchecked")
    private static <T> Deferrable<T> settle(Object answer, Handover handover) {
        Deferred deferred = handover.deferred;
        if (deferred != null && answer == deferred) {
            return Deferrable.deferredTo(deferred);
        }
        return Deferrable.done((T) answer);
    }

    /** One call's key and payload, and the answer once enqueued. */
    private final class Handover {
        private final String key;
        private final EnqueueOptions keyed;
        private final byte[] payload;
        volatile @Nullable Deferred deferred;

        Handover(String key, String payload) {
            this.key = Checks.notNull("key", key);
            this.keyed = EnqueueOptions.defaults().key(key); // validates the key now, not in the fallback
            this.payload = Checks.notNull("payload", payload).getBytes(StandardCharsets.UTF_8);
        }

        Deferred enqueue(EndReason reason) {
            EnqueueOptions options = keyed;
            if (!delay.isZero()) {
                options = options.delay(delay);
            }
            if (maxAttempts > 0) {
                options = options.maxAttempts(maxAttempts);
            }
            long id = jobs.enqueue(queue, type, payload, options);
            Deferred d = new Deferred(queue, key, id, reason, Instant.ofEpochMilli(jobs.clock().currentTimeMillis()));
            deferred = d;
            return d;
        }
    }

    @Override
    public String toString() {
        return "QueueFallback{" + queue + "/" + type + "}";
    }

    /** Configuration of a {@link QueueFallback}. Not thread-safe; {@link #build()} snapshots it. */
    public static final class Builder {
        private final JobQueue jobs;
        private final String queue;
        private final String type;
        private Duration delay = Duration.ZERO;
        private int maxAttempts;
        private Set<EndReason> reasons = EnumSet.of(EndReason.CIRCUIT_OPEN, EndReason.BUDGET, EndReason.DEADLINE,
                EndReason.EXHAUSTED, EndReason.THROTTLED);

        private Builder(JobQueue jobs, String queue, String type) {
            this.jobs = jobs;
            this.queue = queue;
            this.type = type;
        }

        /** How long after the fallback the job first runs (a downstream that just failed needs a moment). Default none. */
        public Builder delay(Duration delay) {
            this.delay = Checks.nonNegative("delay", delay);
            return this;
        }

        /** The job's own attempt limit; default: the worker's policy decides. */
        public Builder maxAttempts(int maxAttempts) {
            this.maxAttempts = Checks.atLeast("maxAttempts", maxAttempts, 1);
            return this;
        }

        /**
         * The end reasons that defer the work. Default CIRCUIT_OPEN, BUDGET, DEADLINE, EXHAUSTED
         * and THROTTLED; NOT_RETRYABLE and INTERRUPTED may be added, SUCCESS, RECOVERED and
         * CANCELLED may not.
         */
        public Builder reasons(EndReason... reasons) {
            Fallback.of(c -> Boolean.TRUE).withReasons(reasons); // the same validation as every fallback's
            this.reasons = EnumSet.copyOf(java.util.List.of(reasons));
            return this;
        }

        public QueueFallback build() {
            return new QueueFallback(this);
        }
    }
}
