package dev.stagger.kafka.internal;

import dev.stagger.Backoff;
import dev.stagger.Clock;
import dev.stagger.EndReason;
import dev.stagger.Jitter;
import dev.stagger.RandomSource;
import dev.stagger.RetryEngine;
import dev.stagger.RetryPolicy;
import dev.stagger.RetryScope;
import dev.stagger.RetryState;
import dev.stagger.internal.HandlerCall;
import dev.stagger.internal.MessageHeaderNames;
import dev.stagger.internal.RetryStep;
import dev.stagger.kafka.KafkaHandler;
import dev.stagger.kafka.KafkaHeaders;
import dev.stagger.kafka.KafkaMessage;
import dev.stagger.kafka.RecordListener;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.InvalidRecordException;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.errors.RecordBatchTooLargeException;
import org.apache.kafka.common.errors.RecordTooLargeException;
import org.apache.kafka.common.errors.TimeoutException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.jspecify.annotations.Nullable;

/**
 * Runs the handler for one record and settles it: done on success; on failure a copy with the
 * next attempt's headers is produced to a delay topic (or the dead-letter topic, as
 * {@link RetryStep} decides), and the record counts as settled (its offset may be committed) only
 * once the broker has acknowledged the copy. A crash in between leaves both, never neither. A
 * retry's copy may instead stay in memory ({@link Acks#keep}, with {@link MemoryRetries}): the
 * record is then handed back to {@link #handle} when due, carrying the headers its copy would
 * have, so the attempt, history and id read the same.
 *
 * <p>A copy that cannot be produced is never followed by the commit. In turn: a copy whose topic
 * is missing is produced again once after the topics are created again; a copy the producer
 * refuses for its size goes to the dead-letter topic with {@link KafkaHeaders#DEAD_CAUSE}
 * {@code UNPUBLISHABLE} and its history cut to the first and latest entries, and when even that
 * is refused, a dead letter without key or payload that says where the original is; any other
 * failure (the broker unreachable, timeouts) is produced again after a wait that a
 * {@link RetryEngine} decides (100 ms doubling to 30 s, equal jitter, no end), until it is
 * produced or the consumer stops. No failure path produces again without waiting, except the one
 * retry after re-creating the topics.
 *
 * <p>A record that arrives before its due time (one that outlasted the largest delay level, or a
 * clock that moved) is delayed again for what remains, without running the handler or counting an
 * attempt, unless its due time lies further ahead than allowed (past the policy's deadline, or
 * more than the consumer's maximum delay from now): that is dead-lettered with
 * {@code DUE_AT_OUT_OF_RANGE}. Thread-safe.
 */
public final class RecordProcessor {
    /** Clock skew between consumers allowed beyond a deadline before a due time is out of range. */
    static final long DEADLINE_SKEW_MILLIS = 1_000;
    /** The schedule between attempts to produce a copy that failed for a reason not the record's own. */
    static final RetryPolicy COPY_POLICY = RetryPolicy.builder().maxAttempts(Integer.MAX_VALUE)
            .backoff(Backoff.exponential(Duration.ofMillis(100)).maxDelay(Duration.ofSeconds(30)).jitter(Jitter.equal()))
            .build();

    /** Creates the delay and dead-letter topics again. */
    @FunctionalInterface
    public interface Recreate {
        void run() throws Exception;
    }

    private final TopicSet topics;
    private final Producer<byte[], byte[]> producer;
    private final RetryStep step;
    private final RetryEngine copyEngine;
    private final KafkaHandler handler;
    private final Clock clock;
    private final long sendTimeoutMillis;
    private final long maxDelayMillis;
    private final Recreate recreate;
    private final BooleanSupplier closing;
    private final BooleanSupplier forced;
    private final Events events;
    private final boolean pinPartition;
    private final RecordListener[] listeners;
    private static final RecordListener[] NO_LISTENERS = {};

    /**
     * What became of each record, for the consumer's listeners. {@code handlerNanos} is 0 when the
     * processor was given no listeners: the handler is then not timed (nobody hears of it).
     */
    public interface Events {
        void settled(ConsumerRecord<byte[], byte[]> record, Outcome outcome, int attempt, long firstAtMillis,
                     long handlerNanos, Duration delay, @Nullable EndReason reason, @Nullable Throwable failure);
    }

    /** What became of a record. */
    public enum Outcome { SUCCEEDED, RETRIED, DEAD_LETTERED, DELAYED_AGAIN, RETURNED }

    /**
     * Where a retry's copy goes without the handler thread waiting for its acknowledgement: the
     * caller learns that a copy of a record is on its way (before it is sent), and then that it
     * was acknowledged, so the record's offset is committed only after that. A record whose copy is
     * not acknowledged must never be committed past.
     */
    public interface Acks {
        /** A copy of {@code record} is about to be sent: its offset must not be committed until {@link #acked}. */
        void sending(ConsumerRecord<byte[], byte[]> record);

        /**
         * The copy of {@code record} is safe on the broker and the record settled as {@code outcome}, or
         * {@code outcome} is null: it could not be produced before the consumer stopped (to be consumed again).
         * Called on the producer's thread or a handler thread.
         */
        void acked(ConsumerRecord<byte[], byte[]> record, @Nullable Outcome outcome);

        /**
         * Keeps {@code record}'s next attempt ({@code next}: its headers, as a copy's) in memory until
         * {@code dueAt} instead of producing it to a delay topic, when the consumer keeps a wait of
         * {@code waitMillis} in memory and has room ({@link MemoryRetries}). When kept, the record is
         * not committed past until {@link #acked}, as a copy on its way.
         *
         * @return whether it is kept; false: its copy goes to the delay topic
         */
        default boolean keep(ConsumerRecord<byte[], byte[]> record, Headers next, long dueAt, long waitMillis) {
            return false;
        }

        /**
         * Runs {@code task} (producing a copy again, which may block and wait) on a handler thread.
         *
         * @throws java.util.concurrent.RejectedExecutionException when the consumer is stopping
         */
        void later(Runnable task);
    }

    /**
     * @param sendTimeoutMillis how long one produce may take before it counts as failed
     * @param maxDelayMillis the longest wait a retry may have
     */
    public RecordProcessor(TopicSet topics, Producer<byte[], byte[]> producer, RetryStep step, KafkaHandler handler,
                           Clock clock, RandomSource random, long sendTimeoutMillis, long maxDelayMillis,
                           Recreate recreate, BooleanSupplier closing, BooleanSupplier forced, Events events) {
        this(topics, producer, step, handler, clock, random, sendTimeoutMillis, maxDelayMillis, recreate, closing, forced,
                events, false, NO_LISTENERS);
    }

    /**
     * @param pinPartition whether a copy goes to the partition of the record's number (key order)
     *     rather than the producer's choice
     * @param listeners asked for a scope around each run of the handler ({@link RecordListener#onHandling})
     */
    public RecordProcessor(TopicSet topics, Producer<byte[], byte[]> producer, RetryStep step, KafkaHandler handler,
                           Clock clock, RandomSource random, long sendTimeoutMillis, long maxDelayMillis,
                           Recreate recreate, BooleanSupplier closing, BooleanSupplier forced, Events events,
                           boolean pinPartition, RecordListener[] listeners) {
        this.pinPartition = pinPartition;
        this.listeners = listeners.clone();
        this.topics = topics;
        this.producer = producer;
        this.step = step;
        this.copyEngine = RetryEngine.of("copy", COPY_POLICY).withClock(clock).withRandom(random);
        this.handler = handler;
        this.clock = clock;
        this.sendTimeoutMillis = sendTimeoutMillis;
        this.maxDelayMillis = maxDelayMillis;
        this.recreate = recreate;
        this.closing = closing;
        this.forced = forced;
        this.events = events;
    }

    /** A copy to produce before the record is settled; a retry's is due at {@code dueAt} (its {@link KafkaHeaders#DUE_AT}). */
    private record Copy(String topic, Headers headers, Outcome outcome, Duration delay, @Nullable EndReason reason,
                        boolean lastResort, boolean bare, long dueAt) {
        /** Not a retry: no due time of its own. */
        Copy(String topic, Headers headers, Outcome outcome, Duration delay, @Nullable EndReason reason, boolean lastResort,
             boolean bare) {
            this(topic, headers, outcome, delay, reason, lastResort, bare, 0);
        }
    }

    /**
     * Handles and settles {@code record}.
     *
     * @return true when it is settled (its offset may be committed); false when it is not (the
     *     consumer is stopping): it is to be consumed again
     */
    public boolean process(ConsumerRecord<byte[], byte[]> record) {
        return handle(record) != null;
    }

    /**
     * Handles and settles {@code record}, as {@link #process}.
     *
     * @return what became of it, or null when it is not settled (to be consumed again)
     */
    public @Nullable Outcome handle(ConsumerRecord<byte[], byte[]> record) {
        return handle(record, null);
    }

    /**
     * Handles and settles {@code record}, as {@link #process}, except that a retry's copy is
     * produced without waiting for its acknowledgement when {@code acks} is given: the handler
     * thread goes on to the next record while the copy travels, and {@code acks} hears when the
     * record may be committed. Dead letters and the other copies are still awaited.
     *
     * @return what became of it, or null when it is not settled (to be consumed again); for a
     *     retry, {@link Outcome#RETRIED} as soon as its copy is sent: what became of the record
     *     ({@code RETRIED}, {@code DEAD_LETTERED} when the copy turned out unpublishable, or not
     *     settled) is told to {@code acks}
     */
    public @Nullable Outcome handle(ConsumerRecord<byte[], byte[]> record, @Nullable Acks acks) {
        Headers in = record.headers();
        boolean plain = !in.iterator().hasNext(); // a first delivery without headers (most records): nothing to read
        int attempt = plain ? 1 : RecordHeaderCodec.attempt(in);
        long now = clock.currentTimeMillis();
        long dueAt = plain ? 0 : RecordHeaderCodec.number(in, KafkaHeaders.DUE_AT, 0);
        if (dueAt > now) {
            long firstAt = RecordHeaderCodec.number(in, KafkaHeaders.FIRST_ATTEMPT_AT, -1);
            Copy out = dueAtOutOfRange(record, attempt, firstAt, dueAt, now);
            if (out == null) {
                Headers headers = carried(record, attempt, firstAt < 0 ? now : firstAt);
                RecordHeaderCodec.put(headers, KafkaHeaders.BACKOFF_STATE, RecordHeaderCodec.number(in, KafkaHeaders.BACKOFF_STATE, 0));
                RecordHeaderCodec.put(headers, KafkaHeaders.DUE_AT, dueAt);
                out = new Copy(topics.retryTopicFor(dueAt - now), headers, Outcome.DELAYED_AGAIN, Duration.ZERO, null, false, false);
            }
            return settle(record, out, attempt, firstAt, 0, null);
        }
        long firstAt = plain ? now : Math.min(now, RecordHeaderCodec.number(in, KafkaHeaders.FIRST_ATTEMPT_AT, now));
        KafkaMessage message = plain && record.topic().equals(topics.topic()) // its id formed only if asked for
                ? KafkaMessage.firstDelivery(record.topic(), record.partition(), record.offset(), record.key(), record.value(),
                        in, Instant.ofEpochMilli(firstAt))
                : plain ? new KafkaMessage(topics.topic(), record.partition(), record.offset(), record.key(), record.value(),
                        in, coordinates(record), 1, Instant.ofEpochMilli(firstAt), List.of())
                : KafkaMessage.retry(topics.topic(), record.partition(), record.offset(), record.key(), record.value(), in,
                        origin(record), attempt, Instant.ofEpochMilli(firstAt));
        HandlerCall call = HandlerCall.run(clock, listeners, message, RecordListener::onHandling,
                () -> handler.handle(message));
        Throwable failure = call.failure();
        long handlerNanos = call.nanos();
        if (failure == null) {
            events.settled(record, Outcome.SUCCEEDED, attempt, firstAt, handlerNanos, Duration.ZERO, null, null);
            return Outcome.SUCCEEDED;
        }
        if (forced.getAsBoolean() || failure instanceof InterruptedException && closing.getAsBoolean()) {
            // stopped by the shutdown, not the record's fault: consumed again without counting the attempt
            events.settled(record, Outcome.RETURNED, attempt, firstAt, handlerNanos, Duration.ZERO, null, failure);
            return null;
        }
        Optional<RetryScope.Outcome> inner = step.defers() ? call.decidedOn() : Optional.empty();
        Copy copy = inner.isPresent() ? deferred(record, attempt, firstAt, failure, inner.get())
                : afterFailure(record, attempt, firstAt, failure);
        if (acks != null && copy.outcome() == Outcome.RETRIED) {
            if (acks.keep(record, copy.headers(), copy.dueAt(), copy.dueAt() - clock.currentTimeMillis())) {
                events.settled(record, Outcome.RETRIED, attempt, firstAt, handlerNanos, copy.delay(), null, failure);
                return Outcome.RETRIED;
            }
            return sendWithoutWaiting(record, copy, attempt, firstAt, handlerNanos, failure, acks);
        }
        return settle(record, copy, attempt, firstAt, handlerNanos, failure);
    }

    /** Where {@code record} was first consumed: its {@link KafkaHeaders#ORIGIN}, or its own coordinates on a first delivery. */
    public static String origin(ConsumerRecord<byte[], byte[]> record) {
        String origin = RecordHeaderCodec.text(record.headers(), KafkaHeaders.ORIGIN);
        return origin != null && origin.length() <= 512 ? origin : coordinates(record);
    }

    private static String coordinates(ConsumerRecord<byte[], byte[]> record) {
        return record.topic() + "/" + record.partition() + "/" + record.offset();
    }

    /** The application's headers with the retry state that travels unchanged: origin, attempt, first attempt, history, re-drives. */
    private Headers carried(ConsumerRecord<byte[], byte[]> record, int attempt, long firstAt) {
        Headers in = record.headers();
        Headers out = RecordHeaderCodec.applicationHeaders(in);
        RecordHeaderCodec.put(out, KafkaHeaders.ORIGIN, origin(record));
        RecordHeaderCodec.put(out, KafkaHeaders.ATTEMPT, attempt);
        RecordHeaderCodec.put(out, KafkaHeaders.FIRST_ATTEMPT_AT, firstAt);
        RecordHeaderCodec.copyHistory(in, out);
        long redrives = RecordHeaderCodec.number(in, KafkaHeaders.REDRIVES, 0);
        if (redrives > 0) {
            RecordHeaderCodec.put(out, KafkaHeaders.REDRIVES, redrives);
        }
        return out;
    }

    /** {@link #carried} with {@code failure} of this attempt appended to the history. */
    private Headers failed(ConsumerRecord<byte[], byte[]> record, int attempt, long firstAt, Throwable failure) {
        Headers out = carried(record, attempt, firstAt);
        RecordHeaderCodec.appendError(record.headers(), out, attempt, clock.currentTimeMillis(), failure);
        return out;
    }

    private Copy deferred(ConsumerRecord<byte[], byte[]> record, int attempt, long firstAt, Throwable failure,
                          RetryScope.Outcome inner) {
        return dead(failed(record, attempt, firstAt, failure), EndReason.NOT_RETRYABLE, MessageHeaderNames.DEFERRED
                + ": retry '" + inner.retry() + "' inside the handler decided on the failure (" + inner.reason() + " after "
                + inner.attempts() + " attempt(s))", false);
    }

    private Copy afterFailure(ConsumerRecord<byte[], byte[]> record, int attempt, long firstAt, Throwable failure) {
        long backoffState = RecordHeaderCodec.number(record.headers(), KafkaHeaders.BACKOFF_STATE, 0);
        RetryStep.Outcome outcome = step.afterFailure(failure, new RetryStep.Attempt(attempt, firstAt, backoffState));
        Headers headers = failed(record, attempt, firstAt, failure);
        if (outcome instanceof RetryStep.Retry retry) {
            long delayMillis = Math.max(1, (retry.delayNanos() + 999_999) / 1_000_000);
            if (delayMillis > maxDelayMillis) {
                return dead(headers, EndReason.NOT_RETRYABLE, MessageHeaderNames.DUE_AT_OUT_OF_RANGE + ": the retry's wait of "
                        + delayMillis + " ms is longer than the consumer's maxDelay of " + maxDelayMillis + " ms", false);
            }
            RecordHeaderCodec.put(headers, KafkaHeaders.ATTEMPT, attempt + 1);
            RecordHeaderCodec.put(headers, KafkaHeaders.BACKOFF_STATE, retry.backoffState());
            long dueAt = clock.currentTimeMillis() + delayMillis;
            RecordHeaderCodec.put(headers, KafkaHeaders.DUE_AT, dueAt);
            return new Copy(topics.retryTopicFor(delayMillis), headers, Outcome.RETRIED, Duration.ofNanos(retry.delayNanos()),
                    null, false, false, dueAt);
        }
        return dead(headers, ((RetryStep.DeadLetter) outcome).reason(), null, false);
    }

    /** {@code headers} made a dead letter's, for {@code reason} (and {@code cause}, when the consumer's own). */
    private Copy dead(Headers headers, EndReason reason, @Nullable String cause, boolean lastResort) {
        RecordHeaderCodec.put(headers, KafkaHeaders.END_REASON, reason.name());
        RecordHeaderCodec.put(headers, KafkaHeaders.DEAD_AT, clock.currentTimeMillis());
        headers.remove(KafkaHeaders.DUE_AT);
        headers.remove(KafkaHeaders.BACKOFF_STATE);
        if (cause != null) {
            RecordHeaderCodec.put(headers, KafkaHeaders.DEAD_CAUSE, cause);
        }
        return new Copy(topics.deadTopic(), headers, Outcome.DEAD_LETTERED, Duration.ZERO, reason, lastResort, false);
    }

    private @Nullable Copy dueAtOutOfRange(ConsumerRecord<byte[], byte[]> record, int attempt, long firstAt, long dueAt,
                                           long now) {
        Optional<Duration> deadline = step.deadline();
        String cause = null;
        EndReason reason = EndReason.NOT_RETRYABLE;
        if (deadline.isPresent() && firstAt >= 0 && dueAt > firstAt + deadline.get().toMillis() + DEADLINE_SKEW_MILLIS) {
            reason = EndReason.DEADLINE;
            cause = MessageHeaderNames.DUE_AT_OUT_OF_RANGE + ": due at " + Instant.ofEpochMilli(dueAt)
                    + ", after the policy's deadline of " + deadline.get() + " from the first attempt at "
                    + Instant.ofEpochMilli(firstAt);
        } else if (dueAt - now > maxDelayMillis) {
            cause = MessageHeaderNames.DUE_AT_OUT_OF_RANGE + ": due " + (dueAt - now)
                    + " ms ahead, more than the consumer's maxDelay of " + maxDelayMillis + " ms";
        }
        return cause == null ? null : dead(carried(record, attempt, firstAt < 0 ? now : firstAt), reason, cause, false);
    }

    private ProducerRecord<byte[], byte[]> copyOf(ConsumerRecord<byte[], byte[]> record, Copy c) {
        // pinned: the copy goes to the partition of the same number (topics of one set have as many), so the
        // consumer that owns the work topic's partition owns its delay partitions too (key order)
        return new ProducerRecord<>(c.topic(), pinPartition ? Integer.valueOf(record.partition()) : null,
                c.bare() ? null : record.key(), c.bare() ? null : record.value(), c.headers());
    }

    /**
     * Sends a retry's copy and returns at once; when the broker acknowledges it, the listeners and
     * {@code acks} hear so. A send that fails goes to {@link #settle} on a handler thread (the
     * same recovery as a copy that is waited for), and {@code acks} hears its result.
     */
    private Outcome sendWithoutWaiting(ConsumerRecord<byte[], byte[]> record, Copy c, int attempt, long firstAt,
                                       long handlerNanos, Throwable failure, Acks acks) {
        acks.sending(record);
        try {
            producer.send(copyOf(record, c), (metadata, e) -> {
                if (e == null) {
                    events.settled(record, c.outcome(), attempt, firstAt, handlerNanos, c.delay(), c.reason(), failure);
                    acks.acked(record, c.outcome());
                    return;
                }
                try {
                    acks.later(() -> acks.acked(record, settle(record, c, attempt, firstAt, handlerNanos, failure, e)));
                } catch (java.util.concurrent.RejectedExecutionException stopping) {
                    acks.acked(record, null); // not produced: consumed again
                }
            });
        } catch (RuntimeException e) {
            // refused before it was sent (a closed producer, a full buffer past max.block.ms): as a failed copy, waited for here
            acks.acked(record, settle(record, c, attempt, firstAt, handlerNanos, failure));
        }
        return Outcome.RETRIED;
    }

    /**
     * Sends {@code retry}, a record's next attempt kept in memory ({@link Acks#keep}), whose
     * partition is revoked or stopping, to the delay topic for what remains of its wait, without
     * waiting: {@code acks} hears {@link Outcome#RETRIED} once the broker acknowledges it, or null
     * when it could not be sent (the record is then consumed again). Its retry was told to the
     * listeners when it was kept.
     */
    void park(KeptRetries.Kept retry, Acks acks) {
        long left = Math.max(1, retry.dueAt - clock.currentTimeMillis());
        Copy c = new Copy(topics.retryTopicFor(left), retry.headers(), Outcome.RETRIED, Duration.ZERO, null, false, false,
                retry.dueAt);
        try {
            producer.send(copyOf(retry, c), (metadata, e) -> acks.acked(retry, e == null ? Outcome.RETRIED : null));
        } catch (RuntimeException e) {
            acks.acked(retry, null);
        }
    }

    /** Produces {@code copy} until the broker acknowledges it or the consumer stops; see the class comment. */
    private @Nullable Outcome settle(ConsumerRecord<byte[], byte[]> record, Copy copy, int attempt, long firstAt, long handlerNanos,
                           @Nullable Throwable failure) {
        return settle(record, copy, attempt, firstAt, handlerNanos, failure, null);
    }

    /** {@link #settle}, the first send having failed already with {@code sendFailure} when that is not null. */
    private @Nullable Outcome settle(ConsumerRecord<byte[], byte[]> record, Copy copy, int attempt, long firstAt, long handlerNanos,
                           @Nullable Throwable failure, @Nullable Throwable sendFailure) {
        RetryState state = copyEngine.firstAttempt();
        boolean recreated = false;
        Copy c = copy;
        Throwable failedBefore = sendFailure;
        while (true) {
            Throwable why = failedBefore;
            failedBefore = null;
            if (why == null) {
                try {
                    producer.send(copyOf(record, c)).get(sendTimeoutMillis, TimeUnit.MILLISECONDS);
                    events.settled(record, c.outcome(), attempt, firstAt, handlerNanos, c.delay(), c.reason(), failure);
                    return c.outcome();
                } catch (ExecutionException e) {
                    why = e.getCause() != null ? e.getCause() : e;
                } catch (java.util.concurrent.TimeoutException | KafkaException e) {
                    why = e;
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return null;
                }
            }
            if (isTheRecordsFault(why) && !c.bare()) {
                c = c.lastResort() ? bare(record, c, attempt, firstAt, why) : unpublishable(c, why);
                continue;
            }
            if (!recreated && (why instanceof UnknownTopicOrPartitionException || why instanceof TimeoutException)) {
                recreated = true; // its topic may have been deleted: created again, the copy goes once more
                try {
                    recreate.run();
                } catch (Exception e) {
                    why.addSuppressed(e);
                }
                continue;
            }
            RetryEngine.Verdict verdict = copyEngine.decide(state, null, why);
            if (!verdict.isRetry() || closing.getAsBoolean()) {
                events.settled(record, Outcome.RETURNED, attempt, firstAt, handlerNanos, Duration.ZERO, null, why);
                return null;
            }
            events.settled(record, Outcome.RETURNED, attempt, firstAt, handlerNanos, verdict.delay(), null, why);
            try {
                clock.sleep(verdict.delay().toNanos());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return null;
            }
            state = verdict.next().orElseThrow();
        }
    }

    private static boolean isTheRecordsFault(Throwable why) {
        return why instanceof RecordTooLargeException || why instanceof RecordBatchTooLargeException
                || why instanceof InvalidRecordException;
    }

    /** The dead letter for a copy the producer refused for itself, with its history cut down. */
    private Copy unpublishable(Copy c, Throwable why) {
        Headers headers = new RecordHeaders(c.headers().toArray());
        RecordHeaderCodec.shrinkHistory(headers);
        String what = c.outcome() == Outcome.DEAD_LETTERED ? "the dead letter" : "the retry";
        EndReason reason = c.outcome() == Outcome.DEAD_LETTERED && c.reason() != null ? c.reason() : EndReason.NOT_RETRYABLE;
        return dead(headers, reason, MessageHeaderNames.UNPUBLISHABLE + ": " + what + " could not be produced: "
                + describe(why), true);
    }

    /** The last resort: a dead letter without key or payload, saying where the record is. */
    private Copy bare(ConsumerRecord<byte[], byte[]> record, Copy c, int attempt, long firstAt, Throwable why) {
        Headers headers = new RecordHeaders();
        RecordHeaderCodec.put(headers, KafkaHeaders.ORIGIN, origin(record));
        RecordHeaderCodec.put(headers, KafkaHeaders.ATTEMPT, attempt);
        RecordHeaderCodec.put(headers, KafkaHeaders.FIRST_ATTEMPT_AT, firstAt < 0 ? clock.currentTimeMillis() : firstAt);
        EndReason reason = c.reason() != null ? c.reason() : EndReason.NOT_RETRYABLE;
        Copy dead = dead(headers, reason, MessageHeaderNames.UNPUBLISHABLE + ": not even a dead letter with the payload"
                + " could be produced (" + describe(why) + "); the record stays at " + record.topic() + "/"
                + record.partition() + "/" + record.offset() + " until the topic's retention removes it", true);
        return new Copy(dead.topic(), dead.headers(), dead.outcome(), dead.delay(), dead.reason(), true, true);
    }

    private static String describe(Throwable t) {
        String m = t.getMessage();
        String text = t.getClass().getSimpleName() + (m == null ? "" : ": " + m);
        return text.length() <= 300 ? text : text.substring(0, 297) + "...";
    }
}
