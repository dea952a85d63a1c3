package dev.stagger;

import org.jspecify.annotations.Nullable;

/**
 * A call was refused before or between attempts for a reason that is not a failure of the
 * operation: the circuit is open, the retry budget is spent, the adaptive throttle refused it or the bulkhead is
 * full. The cause is the last failure of
 * the operation, where there was one.
 */
public class RetryRefusedException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    private final EndReason reason;
    private final transient @Nullable Object lastResult;

    public RetryRefusedException(EndReason reason, String message, @Nullable Throwable cause, @Nullable Object lastResult) {
        super(message, cause);
        this.reason = reason;
        this.lastResult = lastResult;
    }

    public EndReason reason() {
        return reason;
    }

    /** The last attempt's result when a result (not an exception) was being retried, else null. */
    public @Nullable Object lastResult() {
        return lastResult;
    }
}
