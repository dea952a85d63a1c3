package dev.stagger.idempotency;

import java.time.Instant;
import java.util.Optional;

/**
 * What a store holds for one scope.
 *
 * @param scopeId {@link IdempotencyScope#id()}
 * @param fingerprint the fingerprint of the request that claimed the key
 * @param state IN_FLIGHT while the first request runs, COMPLETED once its response is stored
 * @param leaseUntil while IN_FLIGHT, the time after which another request may take the key over
 *     (the first one's server is presumed dead)
 * @param expiresAt when the record may be purged; an expired record counts as absent
 * @param response the stored response, present exactly when COMPLETED
 */
public record IdempotencyRecord(String scopeId, RequestFingerprint fingerprint, State state, Instant leaseUntil,
                                Instant expiresAt, Optional<StoredResponse> response) {

    /** The life of a key: claimed (IN_FLIGHT) then COMPLETED; a released key is deleted. */
    public enum State {
        IN_FLIGHT,
        COMPLETED
    }

    public IdempotencyRecord {
        if (scopeId == null || fingerprint == null || state == null || leaseUntil == null || expiresAt == null
                || response == null) {
            throw new IllegalArgumentException("no field of an IdempotencyRecord may be null");
        }
        if ((state == State.COMPLETED) != response.isPresent()) {
            throw new IllegalArgumentException("response must be present exactly when COMPLETED, state " + state);
        }
    }
}
