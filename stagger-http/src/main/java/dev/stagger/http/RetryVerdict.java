package dev.stagger.http;

/**
 * What {@link RetryingHttpClient#verdict} says about a response: whether the client retries a
 * response like it, and if not, why. A command line or a log can then explain the outcome in the
 * client's own terms instead of keeping a second copy of its rules.
 */
public enum RetryVerdict {
    /** The client retries this status for this request (on a returned response: it gave up on it). */
    RETRYABLE,
    /** The status is never retried for this request, keyed or not (e.g. 400, 404, 422, or a success). */
    STATUS_NOT_RETRYABLE,
    /**
     * The status would be retried for a request that is safe to send twice (an idempotent method,
     * or one carrying an {@code Idempotency-Key} to a server declared to honour keys,
     * {@link RetryingHttpClient.Builder#keysHonoured}); this one is not, so sending it again could
     * run it twice: a POST or PATCH without a key (key mode {@link IdempotencyKeyMode#REQUIRE} or
     * {@link IdempotencyKeyMode#OFF}), or with a key the server is not declared to honour.
     */
    NOT_SAFE_TO_REPEAT,
    /**
     * The status would be retried, but the response carries {@value StaggerHeaders#NO_RETRY}
     * from a server the client trusts ({@link RetryingHttpClient.Builder#signalsTrusted}): the
     * answer is already the result of a retry that gave up, or of a breaker, budget, throttle or
     * load-shedding refusal, so sending the request again would multiply the attempts.
     */
    NO_RETRY_SIGNAL
}
