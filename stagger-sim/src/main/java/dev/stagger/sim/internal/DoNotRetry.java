package dev.stagger.sim.internal;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

/**
 * A tier's answer that its own retries (or guards) already decided the failure: the "do not
 * retry" signal a Stagger server sends, which a guarded caller's classifier stops on. Shared
 * instances without stack trace, failed through a ready {@link CompletionException} as
 * {@link Rejection} is, for the same reason.
 */
public final class DoNotRetry extends RuntimeException {
    private static final long serialVersionUID = 1L;

    /** The retries below gave up on a failure. */
    public static final DoNotRetry DECIDED = new DoNotRetry("failed below; retries there decided: do not retry");
    /** The request's deadline left no time to call further: refused without work. */
    public static final DoNotRetry NO_TIME = new DoNotRetry("deadline too close: refused");

    private final CompletionException wrapped;

    private DoNotRetry(String message) {
        super(message, null, false, false);
        this.wrapped = new CompletionException(this);
    }

    /** Fails {@code reply} with this answer. */
    public void fail(CompletableFuture<?> reply) {
        reply.completeExceptionally(wrapped);
    }
}
