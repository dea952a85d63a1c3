package dev.stagger;

import org.jspecify.annotations.Nullable;

/**
 * A {@link Bulkhead} refused an attempt: as many calls as its limit allows were already in flight,
 * and none ended within its {@code maxWait}. The attempt was not made.
 */
public class BulkheadFullException extends RetryRefusedException {
    private static final long serialVersionUID = 1L;

    private final String bulkheadName;
    private final int limit;

    public BulkheadFullException(String bulkheadName, int limit, @Nullable Throwable cause, @Nullable Object lastResult) {
        super(EndReason.BULKHEAD_FULL, "bulkhead '" + bulkheadName + "' is full (" + limit + " in flight)", cause,
                lastResult);
        this.bulkheadName = bulkheadName;
        this.limit = limit;
    }

    /** The name of the bulkhead that refused. */
    public String bulkheadName() {
        return bulkheadName;
    }

    /** The bulkhead's limit when it refused. */
    public int limit() {
        return limit;
    }
}
