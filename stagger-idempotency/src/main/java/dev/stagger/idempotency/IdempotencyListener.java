package dev.stagger.idempotency;

/**
 * Hears what the idempotency filter and store do, so that metrics and logs can be added without
 * this module depending on a logging or metrics library (stagger-observability's
 * {@code IdempotencyMetrics} is one). Called on request threads (and on the clock's scheduler
 * for purges); must be quick and thread-safe. An exception thrown by a listener is ignored.
 *
 * <p>Events carry the method and the route (the scope's route: a template where a route
 * resolver gives one, else the request path), never the key, the client or the body.
 */
public interface IdempotencyListener {

    /** A listener that does nothing; the default. */
    static IdempotencyListener none() {
        return new IdempotencyListener() {
        };
    }

    /** The filter decided what to do with a keyed request (or one that needed a key). */
    default void decided(IdempotencyOutcome outcome, String method, String route) {
    }

    /** The handler of an {@link IdempotencyOutcome#EXECUTED} or {@link IdempotencyOutcome#TOOK_OVER} request finished. */
    default void completed(IdempotencyCompletion completion, String method, String route, int status) {
    }

    /** A scheduled purge removed {@code removed} expired records. */
    default void purged(long removed) {
    }

    /** A scheduled purge failed; the next one runs at the usual time. */
    default void purgeFailed(RuntimeException error) {
    }
}

