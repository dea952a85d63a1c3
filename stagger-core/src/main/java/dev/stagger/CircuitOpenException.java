package dev.stagger;

import java.time.Duration;
import org.jspecify.annotations.Nullable;

/** A circuit breaker refused a call. It says when the breaker will next let a probe through. */
public class CircuitOpenException extends RetryRefusedException {
    private static final long serialVersionUID = 1L;

    private final String circuitBreakerName;
    private final Duration retryIn;

    public CircuitOpenException(String circuitBreakerName, Duration retryIn, @Nullable Throwable cause, @Nullable Object lastResult) {
        super(EndReason.CIRCUIT_OPEN, "circuit '" + circuitBreakerName + "' is open; next probe allowed in " + retryIn,
                cause, lastResult);
        this.circuitBreakerName = circuitBreakerName;
        this.retryIn = retryIn;
    }

    /** The name of the circuit breaker that refused the call. */
    public String circuitBreakerName() {
        return circuitBreakerName;
    }

    /** How long until the breaker lets a probe through (zero when half-open and out of permits). */
    public Duration retryIn() {
        return retryIn;
    }
}
