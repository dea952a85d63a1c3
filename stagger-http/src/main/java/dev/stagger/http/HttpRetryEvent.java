package dev.stagger.http;

import java.net.URI;
import java.time.Duration;
import org.jspecify.annotations.Nullable;

/**
 * One scheduled retry of an HTTP call: what failed and how long the client will wait. It carries
 * the fields of the {@code http_retry} log line; an observability module renders it, this module
 * only emits it (it depends on no logging or metrics library).
 *
 * @param service the client's service name (the downstream being called)
 * @param operation what was called, by default {@code "POST /orders"} (method and path)
 * @param attempt the attempt that just failed, 1 for the first; the next attempt is {@code attempt + 1}
 * @param maxAttempts total attempts the policy allows
 * @param status the failed attempt's HTTP status, or -1 when it threw
 * @param delay the wait before the next attempt (jitter and any Retry-After included)
 * @param requestId the idempotency key sent, else the request's {@code X-Request-Id}, else null
 * @param method the HTTP method
 * @param uri the request URI
 * @param cause what the failed attempt threw, or null when it returned a status
 */
public record HttpRetryEvent(String service, String operation, int attempt, int maxAttempts, int status,
                             Duration delay, @Nullable String requestId, String method, URI uri, @Nullable Throwable cause) {
}
