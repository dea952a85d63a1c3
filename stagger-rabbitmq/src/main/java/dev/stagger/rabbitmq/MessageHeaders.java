package dev.stagger.rabbitmq;

import dev.stagger.internal.MessageHeaderNames;

/**
 * The AMQP headers a {@link RabbitConsumer} writes on the messages it republishes, so that a
 * message's retry state travels with it from one delivery (and one process) to the next, and an
 * operator (or a consumer in another language) can read it. A message published by an application
 * has none of them: its first delivery is attempt 1.
 */
public final class MessageHeaders {
    /** The attempt this delivery is, 1 for the first (an int; absent means 1). */
    public static final String ATTEMPT = MessageHeaderNames.ATTEMPT;
    /** When the first attempt ran, epoch milliseconds (a long); the policy's deadline runs from it. */
    public static final String FIRST_ATTEMPT_AT = MessageHeaderNames.FIRST_ATTEMPT_AT;
    /**
     * What the message's backoff schedule remembers from its earlier retries (a long, see
     * {@code Backoff.Schedule#state()}), so stateful schedules continue across deliveries.
     */
    public static final String BACKOFF_STATE = MessageHeaderNames.BACKOFF_STATE;
    /** When a delayed retry is due, epoch milliseconds (a long); an earlier delivery is delayed again. */
    public static final String DUE_AT = MessageHeaderNames.DUE_AT;
    /**
     * The error history: an array of tables, one per failed attempt, oldest first, with the keys
     * {@code attempt} (int), {@code failed_at} (epoch ms, long), {@code exception} (class name) and
     * {@code message} (the exception's message, at most 1,000 characters). At most 50 entries
     * and 16 KiB are kept: the first, and the latest that fit; {@link #ERRORS_DROPPED} counts the others.
     */
    public static final String ERRORS = MessageHeaderNames.ERRORS;
    /** How many entries between the first and the latest were dropped from {@link #ERRORS} to bound its size (an int; absent: none). */
    public static final String ERRORS_DROPPED = MessageHeaderNames.ERRORS_DROPPED;
    /** On a dead letter: why it ended, an {@link dev.stagger.EndReason} name ({@code EXHAUSTED}, {@code NOT_RETRYABLE}, ...). */
    public static final String END_REASON = MessageHeaderNames.END_REASON;
    /**
     * On a message the consumer dead-lettered for a reason of its own rather than the policy's
     * (a string): {@code UNPUBLISHABLE: ...} when its retry (or the dead letter itself, in full)
     * could not be published, {@code DUE_AT_OUT_OF_RANGE: ...} when its {@link #DUE_AT} lay further
     * ahead than the policy allows; the text after the colon says why, without payload data.
     */
    public static final String DEAD_CAUSE = MessageHeaderNames.DEAD_CAUSE;
    /** On a dead letter: when it was dead-lettered, epoch milliseconds (a long). */
    public static final String DEAD_AT = MessageHeaderNames.DEAD_AT;
    /** How many times the message was sent back from the dead letters (an int). */
    public static final String REDRIVES = MessageHeaderNames.REDRIVES;
    /**
     * Set by {@link DeadLetters#redrive} on each message it moves: one value per call, so that a
     * re-driven message that failed again and came back during the same call is not moved twice.
     */
    public static final String REDRIVE_ID = MessageHeaderNames.REDRIVE_ID;
    /** Set by the consumer on each republish to match a broker's return to its publish; no meaning to readers. */
    public static final String PUBLISH_ID = "x-stagger-publish-id";

    private MessageHeaders() {
    }
}
