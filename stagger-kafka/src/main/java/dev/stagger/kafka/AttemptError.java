package dev.stagger.kafka;

import java.time.Instant;
import java.util.Objects;

/**
 * One failed attempt in a record's error history ({@link KafkaHeaders#ERRORS}).
 *
 * @param attempt the attempt that failed, 1 for the first
 * @param failedAt when it failed
 * @param exceptionClass the failure's class name
 * @param message the failure's message, possibly empty, at most 1,000 characters
 */
public record AttemptError(int attempt, Instant failedAt, String exceptionClass, String message) {
    public AttemptError {
        Objects.requireNonNull(failedAt, "failedAt must not be null");
        Objects.requireNonNull(exceptionClass, "exceptionClass must not be null");
        message = message == null ? "" : message;
    }
}
