package dev.stagger.idempotency.internal;

/** What a claim does when a record already exists; shared by every store so they agree. */
public enum ClaimRules {
    /** The record expired: delete it and claim as if it never existed. */
    REPLACE_EXPIRED,
    /** Another request used the key first. */
    MISMATCH,
    /** Completed with the same fingerprint. */
    REPLAY,
    /** Running, lease valid. */
    IN_FLIGHT,
    /** Running, but the lease passed: the owner presumably died. */
    TAKE_OVER;

    public static ClaimRules decide(boolean completed, String storedFingerprint, String fingerprint,
                                    long leaseUntilMillis, long expiresAtMillis, long nowMillis) {
        if (expiresAtMillis <= nowMillis) {
            return REPLACE_EXPIRED;
        }
        if (!storedFingerprint.equals(fingerprint)) {
            return MISMATCH;
        }
        if (completed) {
            return REPLAY;
        }
        return leaseUntilMillis > nowMillis ? IN_FLIGHT : TAKE_OVER;
    }
}
