package dev.stagger.idempotency;

import java.time.Instant;

/**
 * The outcome of {@link IdempotencyStore#claim}: decided atomically by the store, so of any
 * number of concurrent identical requests exactly one is {@link Acquired}.
 */
public sealed interface Claim permits Claim.Acquired, Claim.Replay, Claim.InFlight, Claim.Mismatch {

    /**
     * The caller owns the key until {@code leaseUntil}: it must run the request and then
     * {@link IdempotencyStore#complete complete} or {@link IdempotencyStore#release release} it.
     *
     * @param leaseToken proves ownership to complete/release; a request that lost its lease to a
     *     takeover can no longer complete
     * @param tookOver true when a previous owner's lease had expired (its server presumably died)
     */
    record Acquired(String leaseToken, Instant leaseUntil, boolean tookOver) implements Claim {
    }

    /** The first request completed with the same fingerprint: send {@code response} again. */
    record Replay(StoredResponse response) implements Claim {
    }

    /** The first request is still running (its lease is valid until {@code leaseUntil}). */
    record InFlight(Instant leaseUntil) implements Claim {
    }

    /** The key was first used for a different request (another fingerprint). */
    record Mismatch() implements Claim {
    }
}
