package dev.stagger.jobs;

import java.time.Instant;
import java.util.Objects;

/**
 * One failed attempt of a job, as kept in its error history.
 *
 * @param attempt the attempt that failed (1 for the first)
 * @param failedAt when the failure was recorded
 * @param exceptionClass the failure's class name; {@code "lease-expired"} when the worker holding
 *     the job stopped heartbeating (it crashed or lost its database connection)
 * @param message the failure's message, possibly empty
 * @param stackTrace the failure's stack trace, trimmed to keep the row small
 */
public record JobError(int attempt, Instant failedAt, String exceptionClass, String message, String stackTrace) {
    /** The exception class recorded for a job whose worker lost its lease. */
    public static final String LEASE_EXPIRED = "lease-expired";

    public JobError {
        Objects.requireNonNull(failedAt, "failedAt");
        Objects.requireNonNull(exceptionClass, "exceptionClass");
        message = message == null ? "" : message;
        stackTrace = stackTrace == null ? "" : stackTrace;
    }
}
