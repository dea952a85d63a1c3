package dev.stagger.idempotency;

/**
 * What the filter did with a request that carried (or needed) an {@code Idempotency-Key}. The
 * first three run the handler or replay its answer; the rest are the filter's own error answers,
 * whose body an error writer may shape.
 */
public enum IdempotencyOutcome {
    /** The first request with its key: the handler runs. */
    EXECUTED,
    /**
     * The key was claimed by a request whose lease then passed (its server presumably died): this
     * request takes the key over and the handler runs.
     */
    TOOK_OVER,
    /** The key completed earlier for the same request: its stored response is sent again. */
    REPLAYED,
    /** 409: a request with the key is still running. */
    IN_FLIGHT,
    /** 422: the key was used for a different request (another fingerprint). */
    KEY_REUSED,
    /** 400: no key where one is required. */
    KEY_MISSING,
    /** 400: the key is malformed, too long, or sent twice. */
    KEY_INVALID,
    /** 400: a key, but neither a principal nor a scope resolver answer names the client. */
    NO_CLIENT_SCOPE,
    /** 413: the body is larger than the filter fingerprints. */
    BODY_TOO_LARGE,
    /** 503: the store could not be reached; the handler did not run. */
    STORE_UNAVAILABLE;

    /** True for the outcomes the filter answers itself with an error status. */
    public boolean isError() {
        return ordinal() > REPLAYED.ordinal();
    }
}
