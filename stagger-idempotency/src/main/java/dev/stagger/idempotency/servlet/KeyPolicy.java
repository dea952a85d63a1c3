package dev.stagger.idempotency.servlet;

/** How the filter treats the {@code Idempotency-Key} header on one kind of request. */
public enum KeyPolicy {
    /** A request without a key gets 400; with a valid key it runs at most once. */
    REQUIRED,
    /** A request with a key runs at most once; without one it passes through untouched. */
    OPTIONAL,
    /** The filter stays out of the way: no buffering, the response streams as usual. */
    IGNORED
}
