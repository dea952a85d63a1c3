package dev.stagger;

/** Why a call ended. Every call ends with exactly one. */
public enum EndReason {
    /** The first attempt succeeded. */
    SUCCESS,
    /** An attempt after the first succeeded. */
    RECOVERED,
    /** The last allowed attempt failed. */
    EXHAUSTED,
    /** The classifier said the failure is permanent. */
    NOT_RETRYABLE,
    /** The next wait (or the server's Retry-After) would end past the deadline. */
    DEADLINE,
    /** The retry budget refused a retry. */
    BUDGET,
    /** The circuit breaker refused an attempt. */
    CIRCUIT_OPEN,
    /** The adaptive throttle refused an attempt locally: the backend has been rejecting requests. */
    THROTTLED,
    /** The bulkhead refused an attempt: its limit of calls in flight was reached and no permit freed in time. */
    BULKHEAD_FULL,
    /** The thread was interrupted while waiting (or the operation threw InterruptedException). */
    INTERRUPTED,
    /** An async call's future was cancelled. */
    CANCELLED;

    /** True for SUCCESS and RECOVERED. */
    public boolean isSuccess() {
        return this == SUCCESS || this == RECOVERED;
    }
}
