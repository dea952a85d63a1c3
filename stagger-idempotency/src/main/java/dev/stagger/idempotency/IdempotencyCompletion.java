package dev.stagger.idempotency;

/** What became of the response of a request whose handler ran under a key. */
public enum IdempotencyCompletion {
    /** Stored: repeats get it replayed. */
    STORED,
    /** A 5xx answer, not stored (unless server errors are stored): the key was released, a retry runs again. */
    RELEASED,
    /** The handler threw: the key was released. */
    FAILED,
    /** Sent but not storable (over the stored-body limit, {@code sendError}, async): the key was released. */
    NOT_STORED,
    /**
     * The key had been taken over by another request while this one ran (its lease passed): the
     * response was sent but not stored. Another execution of the same request may have run:
     * lengthen the lease if this happens.
     */
    LEASE_LOST,
    /** The store failed while saving the response: it was sent, and the key released if the store allowed. */
    STORE_FAILED
}
