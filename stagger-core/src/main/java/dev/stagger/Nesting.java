package dev.stagger;

/**
 * What a {@link Retry} does when it runs inside another Stagger retry, or another runs inside it
 * ({@link Retry#withNesting}). Stagger's rule is that each failure is retried by exactly one layer:
 * the innermost retry that sees it, because it is closest to the failure (it knows the status, the
 * Retry-After and the idempotency key) and retries the smallest unit of work. An enclosing retry
 * does not retry again a failure an inner one has already decided on.
 */
public enum Nesting {
    /**
     * The default. A failure an inner retry decided on (retried until it gave up, or judged not
     * retryable) is not retried again here: the call ends with {@link EndReason#NOT_RETRYABLE}
     * and listeners receive a {@link RetryEvent.Deferred}. Failures no inner retry decided on are
     * retried as usual.
     */
    DEFER,
    /**
     * Today's behaviour before nesting was known, asked for explicitly: failures inner retries
     * decided on are retried here again, so attempts multiply (inner × outer).
     */
    RETRY_AGAIN,
    /**
     * Refuses nesting outright: a call of this retry inside another Stagger retry, or of another
     * inside this one, fails at once with a {@link RetryNestingException} naming both, without
     * running the operation.
     */
    REFUSE
}
