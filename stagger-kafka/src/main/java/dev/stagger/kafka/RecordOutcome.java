package dev.stagger.kafka;

/** What became of one record. */
public enum RecordOutcome {
    /** The handler returned; the record is settled. */
    SUCCEEDED,
    /** The handler failed with a retryable failure; a copy waits in a delay topic for the next attempt. */
    RETRIED,
    /** The handler failed permanently or for the last allowed time (or the consumer could not retry it); a copy is in the dead-letter topic. */
    DEAD_LETTERED,
    /** The record came before its due time and was put back in a delay topic for what remains; no attempt was counted. */
    DELAYED_AGAIN,
    /**
     * The record was not settled and will be consumed again, without counting an attempt: the
     * consumer was stopping, or its copy could not be produced; in the second case it is produced
     * again after {@link RecordEvent#delay()}.
     */
    RETURNED
}
