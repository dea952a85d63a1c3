package dev.stagger.rabbitmq;

import java.time.Instant;
import java.util.Objects;

/**
 * One failed attempt in a message's error history ({@link MessageHeaders#ERRORS}).
 *
 * @param attempt the attempt that failed, 1 for the first
 * @param failedAt when it failed
 * @param exceptionClass the failure's class name
 * @param message the failure's message, possibly empty, at most 1,000 characters
 */
public record MessageError(int attempt, Instant failedAt, String exceptionClass, String message) {
    public MessageError {
        Objects.requireNonNull(failedAt, "failedAt must not be null");
        Objects.requireNonNull(exceptionClass, "exceptionClass must not be null");
        message = message == null ? "" : message;
    }
}
