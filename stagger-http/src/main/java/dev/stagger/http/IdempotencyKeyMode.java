package dev.stagger.http;

/**
 * Whether {@link RetryingHttpClient} attaches an {@code Idempotency-Key} to POST and PATCH.
 *
 * <p>A POST that timed out may have been processed; sending it again without a key can charge a
 * card twice. A key the server honours turns the repeat into a replay of the first outcome, which
 * makes the retry safe; a key the server ignores changes nothing. So a key makes a request safe
 * to send again only where the client is told the server honours keys
 * ({@link RetryingHttpClient.Builder#keysHonoured}); elsewhere a keyed request follows the
 * conservative rule of an unkeyed one: it is retried after a connect failure and after the
 * statuses that show it was not processed (by default 408, 429, 503), never after 500, 502, 504,
 * a timeout or a reset after sending. A caller-supplied {@code Idempotency-Key} header is always
 * kept.
 */
public enum IdempotencyKeyMode {
    /**
     * The default: every POST and PATCH without a key gets one generated key (a UUID v4, sent as an
     * RFC 8941 string: {@code Idempotency-Key: "…"}), reused by every attempt of that call. The
     * key makes retries after ambiguous outcomes safe only for servers declared to honour keys
     * ({@link RetryingHttpClient.Builder#keysHonoured}); for others the request is retried by the
     * conservative rule, as under {@link #OFF}.
     */
    AUTO,
    /**
     * No key is generated, and an unkeyed non-idempotent request is sent once: it is never
     * retried, except after a connect failure (the request never left the client, so sending it
     * again cannot duplicate anything).
     */
    REQUIRE,
    /**
     * No key is generated. A request that is neither idempotent nor keyed is retried only after
     * outcomes that show it was not processed: a connect failure, or a status the table marks
     * {@link StatusTable.Rule#RETRY} (by default 408, 429, 503). Never after 500, 502, 504, a
     * timeout or a reset after sending, which leave open whether it was processed.
     */
    OFF
}
