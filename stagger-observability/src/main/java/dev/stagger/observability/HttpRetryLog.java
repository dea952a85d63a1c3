package dev.stagger.observability;

import dev.stagger.http.HttpRetryEvent;
import dev.stagger.http.HttpRetryListener;

/**
 * Renders the HTTP client's retries as {@code event=http_retry} lines through a {@link RetryLog},
 * with the same keys as every other retry line: {@code service, operation, attempt, max_attempts,
 * status, delay_ms, request_id} (the idempotency key or X-Request-Id), and {@code reason} (the
 * exception's class) when no status came back.
 *
 * <pre>{@code
 * RetryingHttpClient client = RetryingHttpClient.builder(HttpClient.newHttpClient())
 *         .service("payments")
 *         .httpListener(new HttpRetryLog(RetryLog.builder().build()))
 *         .build();
 * }</pre>
 */
public final class HttpRetryLog implements HttpRetryListener {
    /** The {@code event} value of these lines. */
    public static final String EVENT = "http_retry";

    private final RetryLog log;

    public HttpRetryLog(RetryLog log) {
        if (log == null) {
            throw new NullPointerException("log must not be null");
        }
        this.log = log;
    }

    @Override
    public void onRetry(HttpRetryEvent e) {
        boolean threw = e.status() < 0;
        log.logRetry(EVENT, e.service(), e.operation(), e.attempt(), e.maxAttempts(), threw ? null : e.status(),
                e.delay().toMillis(), e.requestId(), threw && e.cause() != null ? e.cause().getClass().getSimpleName() : null);
    }
}
