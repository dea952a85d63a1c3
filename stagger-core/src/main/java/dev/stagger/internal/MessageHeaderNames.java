package dev.stagger.internal;

/**
 * The names of the headers Stagger's queue consumers write on the copies they publish (RabbitMQ's
 * {@code MessageHeaders}, Kafka's {@code KafkaHeaders} document them for their broker): one home,
 * so a message's retry state reads the same whichever broker carried it.
 */
public final class MessageHeaderNames {
    public static final String ATTEMPT = "x-stagger-attempt";
    public static final String FIRST_ATTEMPT_AT = "x-stagger-first-attempt-at";
    public static final String BACKOFF_STATE = "x-stagger-backoff-state";
    public static final String DUE_AT = "x-stagger-due-at";
    public static final String ERRORS = "x-stagger-errors";
    public static final String ERRORS_DROPPED = "x-stagger-errors-dropped";
    public static final String END_REASON = "x-stagger-end-reason";
    public static final String DEAD_CAUSE = "x-stagger-dead-cause";
    public static final String DEAD_AT = "x-stagger-dead-at";
    public static final String REDRIVES = "x-stagger-redrives";
    public static final String REDRIVE_ID = "x-stagger-redrive-id";
    /** What every name above starts with. */
    public static final String PREFIX = "x-stagger-";
    /** Why a consumer dead-lettered a message whose copy could not be published. */
    public static final String UNPUBLISHABLE = "UNPUBLISHABLE";
    /** Why a consumer dead-lettered a message whose due time lay further ahead than allowed. */
    public static final String DUE_AT_OUT_OF_RANGE = "DUE_AT_OUT_OF_RANGE";
    /** Why a consumer dead-lettered a failure a retry inside the handler decided on. */
    public static final String DEFERRED = "DEFERRED";

    private MessageHeaderNames() {
    }
}
