package dev.stagger.rabbitmq;

/** What became of one delivery. */
public enum MessageOutcome {
    /** The handler returned; the message was acknowledged. */
    SUCCEEDED,
    /** The handler failed with a retryable failure; a copy waits in a delay queue for the next attempt. */
    RETRIED,
    /** The handler failed permanently or for the last allowed time; the message is in the dead-letter queue. */
    DEAD_LETTERED,
    /**
     * The message was given back to the broker without counting an attempt: the consumer was
     * shutting down, or no copy of it (its retry, nor its dead letter) could be published. In the
     * second case it goes back only after a wait ({@link MessageEvent#delay()}) that grows with
     * each consecutive failure. It is delivered again.
     */
    RETURNED
}
