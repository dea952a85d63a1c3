package dev.stagger;

import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * A call's answer for a person: a message that is safe to show (it names no host, class, status
 * or stack) and, when known, when to try again. Thrown by {@link Fallback#message(String)}.
 *
 * <p>{@link #getMessage()} and {@link #toString()} carry only the safe message; the call's own
 * failure is attached as suppressed, so a log that prints the stack trace still shows what went
 * wrong while a page that prints the message shows nothing internal.
 */
public class UserFacingException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    private final EndReason reason;
    private final @Nullable Duration retryIn;
    private final @Nullable Instant retryAt;

    /**
     * @param userMessage the text to show; must contain no internal detail
     * @param reason why the call ended
     * @param retryIn how long until trying again is worthwhile, or null when not known
     * @param retryAt the same as a point in time, or null when not known
     */
    public UserFacingException(String userMessage, EndReason reason, @Nullable Duration retryIn,
                               @Nullable Instant retryAt) {
        super(userMessage, null, true, false); // no stack trace of our own: it would say nothing a user needs
        this.reason = reason;
        this.retryIn = retryIn;
        this.retryAt = retryAt;
    }

    /** The text to show the user (the same as {@link #getMessage()}). */
    @SuppressWarnings("NullAway") // the constructor passes its non-null userMessage to super, which getMessage returns
    public String userMessage() {
        return getMessage();
    }

    /** Why the call ended. */
    public EndReason reason() {
        return reason;
    }

    /**
     * How long until trying again is worthwhile, when known: from a circuit breaker's next probe
     * or (the HTTP client) the last response's {@code Retry-After}. Empty when nothing is known:
     * a call the adaptive throttle refused ({@link EndReason#THROTTLED}) has no time of its own,
     * as the throttle's refusals fade with the backend's accepts, not at a time.
     */
    public Optional<Duration> retryIn() {
        return Optional.ofNullable(retryIn);
    }

    /** When trying again is worthwhile, when known. */
    public Optional<Instant> retryAt() {
        return Optional.ofNullable(retryAt);
    }

    @Override
    public String toString() {
        return "UserFacingException: " + getMessage();
    }
}
