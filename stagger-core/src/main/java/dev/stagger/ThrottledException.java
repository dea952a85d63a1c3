package dev.stagger;

/**
 * An {@link AdaptiveThrottle} refused an attempt locally: the backend has been rejecting requests,
 * and this one was not sent. It says how likely a refusal was when it was made.
 */
public class ThrottledException extends RetryRefusedException {
    private static final long serialVersionUID = 1L;

    private final String throttle;
    private final double rejectionProbability;

    public ThrottledException(String throttle, double rejectionProbability, Throwable cause, Object lastResult) {
        super(EndReason.THROTTLED, "throttle '" + throttle + "' refused the attempt locally (rejection probability "
                + String.format(java.util.Locale.ROOT, "%.2f", rejectionProbability) + ")", cause, lastResult);
        this.throttle = throttle;
        this.rejectionProbability = rejectionProbability;
    }

    public String throttle() {
        return throttle;
    }

    /** The throttle's rejection probability when it refused, in [0, 1). */
    public double rejectionProbability() {
        return rejectionProbability;
    }
}
