package dev.stagger.http;

/**
 * Whether {@link RetryingHttpClient} attaches an {@code Idempotency-Key} to POST and PATCH.
 *
 * <p>A POST that timed out may have been processed; sending it again without a key can charge a
 * card twice. A key the server understands turns the repeat into a replay of the first outcome,
 * which makes the retry safe. A caller-supplied {@code Idempotency-Key} header is always kept.
 */
public enum IdempotencyKeyMode {
    /**
     * The default: every POST and PATCH without a key gets one generated key (a UUID v4, sent as an
     * RFC 8941 string: {@code Idempotency-Key: "…"}), reused by every attempt of that call.
     */
    AUTO,
    /**
     * No key is generated, and an unkeyed non-idempotent request is sent once: it is never
     * retried, except after a connect failure (the request never left the client, so sending it
     * again cannot duplicate anything).
     */
    REQUIRE,
    /**
     * No key is generated; statuses are retried per the status table, but failures that may have
     * reached the server (timeouts, resets) are retried only for idempotent methods.
     */
    OFF
}
