package dev.stagger.idempotency;

import java.time.Duration;
import java.util.Optional;

/**
 * Durable memory of {@code scope → response}. Implementations must make {@link #claim} atomic
 * (insert-if-absent, compare-and-set on takeover): two servers sharing one database must never
 * both be told {@link Claim.Acquired} for the same scope while a lease is valid. Times come from
 * one clock all its users share: the store's {@link dev.stagger.Clock} for a store in one place,
 * the database server's for {@link JdbcIdempotencyStore} on PostgreSQL. Thread-safe.
 *
 * <p>Methods throw {@link dev.stagger.jdbc.StoreException} when the backing storage fails.
 */
public interface IdempotencyStore {

    /**
     * Claims {@code scope} for a request with {@code fingerprint}, or reports why not.
     * A record whose expiry has passed counts as absent. An IN_FLIGHT record whose lease has
     * passed is taken over (when the fingerprint matches).
     *
     * @param lease how long the claimant may run before others may take over
     * @param expiry how long the record is kept (counted again from completion)
     */
    Claim claim(IdempotencyScope scope, RequestFingerprint fingerprint, Duration lease, Duration expiry);

    /**
     * Stores the response and marks the record COMPLETED, if {@code leaseToken} still owns it.
     *
     * @return false when the lease was lost (taken over, or the record expired and was purged);
     *     nothing is stored then
     */
    boolean complete(IdempotencyScope scope, String leaseToken, StoredResponse response, Duration expiry);

    /**
     * Deletes an IN_FLIGHT record owned by {@code leaseToken}, so the next repeat executes afresh.
     *
     * @return false when the lease was lost already
     */
    boolean release(IdempotencyScope scope, String leaseToken);

    /** The record for {@code scope}, expired or not. */
    Optional<IdempotencyRecord> find(IdempotencyScope scope);

    /**
     * Deletes at most {@code batchSize} records whose expiry has passed, in one short statement,
     * so a purge never holds locks for long.
     *
     * @return the number deleted; less than {@code batchSize} means none are left
     */
    int purgeExpired(int batchSize);

    /** Calls {@link #purgeExpired} until a batch comes back short. @return the total deleted */
    default long purgeAllExpired(int batchSize) {
        long total = 0;
        int n;
        do {
            n = purgeExpired(batchSize);
            total += n;
        } while (n == batchSize);
        return total;
    }
}
