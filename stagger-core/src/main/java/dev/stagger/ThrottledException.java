package dev.stagger;

import org.jspecify.annotations.Nullable;

/**
 * An {@link AdaptiveThrottle} refused an attempt locally: the backend has been rejecting requests,
 * and this one was not sent. It says how likely a refusal was when it was made.
 */
public class ThrottledException extends RetryRefusedException {
    private static final long serialVersionUID = 1L;

    private final String throttleName;
    private final double rejectionProbability;

    public ThrottledException(String throttleName, double rejectionProbability, @Nullable Throwable cause,
                              @Nullable Object lastResult) {
        super(EndReason.THROTTLED, "throttle '" + throttleName + "' refused the attempt locally (rejection probability "
                + String.format(java.util.Locale.ROOT, "%.2f", rejectionProbability) + ")", cause, lastResult);
        this.throttleName = throttleName;
        this.rejectionProbability = rejectionProbability;
    }

    /** The name of the throttle that refused. */
    public String throttleName() {
        return throttleName;
    }

    /** The throttle's rejection probability when it refused, in [0, 1). */
    public double rejectionProbability() {
        return rejectionProbability;
    }
}
