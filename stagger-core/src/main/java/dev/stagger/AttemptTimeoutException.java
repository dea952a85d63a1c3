package dev.stagger;

import java.time.Duration;
import java.util.concurrent.TimeoutException;

/** An async attempt ran past the policy's {@code attemptTimeout}. Retryable by default. */
public class AttemptTimeoutException extends TimeoutException {
    private static final long serialVersionUID = 1L;

    public AttemptTimeoutException(int attempt, Duration timeout) {
        super("attempt " + attempt + " timed out after " + timeout);
    }
}
