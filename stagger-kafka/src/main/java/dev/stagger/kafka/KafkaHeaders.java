package dev.stagger.kafka;

import dev.stagger.internal.MessageHeaderNames;

/**
 * The record headers a {@link KafkaRetryConsumer} writes on the copies it produces to its delay
 * and dead-letter topics, so a record's retry state travels with it from one delivery (and one
 * process) to the next. The names are those of the RabbitMQ consumer's headers. Values are UTF-8
 * text: numbers in decimal, times in epoch milliseconds, so a consumer in another language can
 * read them. A record produced by an application has none of them: its first delivery is attempt 1.
 * The consumer reads them leniently (a malformed or oversized value counts as absent) and never
 * copies the incoming ones blindly: each copy carries values it wrote itself.
 */
public final class KafkaHeaders {
    /** The attempt this delivery is, 1 for the first (absent means 1). */
    public static final String ATTEMPT = MessageHeaderNames.ATTEMPT;
    /** When the first attempt ran, epoch milliseconds; the policy's deadline runs from it. */
    public static final String FIRST_ATTEMPT_AT = MessageHeaderNames.FIRST_ATTEMPT_AT;
    /** What the backoff schedule remembers from the earlier retries, so stateful schedules continue across deliveries. */
    public static final String BACKOFF_STATE = MessageHeaderNames.BACKOFF_STATE;
    /** When a delayed retry is due, epoch milliseconds; a delay topic's partition stays paused until its head is due. */
    public static final String DUE_AT = MessageHeaderNames.DUE_AT;
    /**
     * One failed attempt of the error history, repeated once per entry, oldest first:
     * {@code attempt=<n>;failed_at=<epoch ms>;exception=<class name>;message=<text>} (the message
     * last, at most 1,000 characters). At most 50 entries and 16 KiB are kept: the first, and the
     * latest that fit; {@link #ERRORS_DROPPED} counts the others.
     */
    public static final String ERRORS = MessageHeaderNames.ERRORS;
    /** How many entries between the first and the latest were dropped from the history to bound its size. */
    public static final String ERRORS_DROPPED = MessageHeaderNames.ERRORS_DROPPED;
    /** On a dead letter: why it ended, an {@link dev.stagger.EndReason} name. */
    public static final String END_REASON = MessageHeaderNames.END_REASON;
    /**
     * On a record the consumer dead-lettered for a reason of its own rather than the policy's:
     * {@code UNPUBLISHABLE: ...} when its copy could not be produced (too large for the producer,
     * say), {@code DUE_AT_OUT_OF_RANGE: ...} when its {@link #DUE_AT} lay further ahead than
     * allowed, {@code DEFERRED: ...} when a retry inside the handler had decided on the failure.
     */
    public static final String DEAD_CAUSE = MessageHeaderNames.DEAD_CAUSE;
    /** On a dead letter: when it was dead-lettered, epoch milliseconds. */
    public static final String DEAD_AT = MessageHeaderNames.DEAD_AT;
    /** How many times the record was sent back from the dead letters. */
    public static final String REDRIVES = MessageHeaderNames.REDRIVES;
    /**
     * Where the record was first consumed, {@code <topic>/<partition>/<offset>}: the same on every
     * copy, so it identifies the record across retries (the key for an inbox), and on a dead
     * letter whose payload could not be copied it says where the original still is.
     */
    public static final String ORIGIN = "x-stagger-origin";

    private KafkaHeaders() {
    }
}
