package dev.stagger.sim.internal;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

/**
 * A simulated server's refusal. Shared instances without stack trace or suppression: the
 * simulator throws millions of them, and the retry engine treats them as any retryable failure.
 */
public final class Rejection extends RuntimeException {
    private static final long serialVersionUID = 1L;

    /** The register's version changed between the read and the write. */
    public static final Rejection CONFLICT = new Rejection("409 version changed");
    /** The server is down. */
    public static final Rejection UNAVAILABLE = new Rejection("503 server down");
    /** The server's queue is full. */
    public static final Rejection OVERLOADED = new Rejection("503 overloaded");

    /**
     * This rejection as a dependent stage of a failed future would carry it. A future failed with
     * the bare rejection makes each dependent stage (such as the engine's {@code whenComplete})
     * wrap it in a new {@code CompletionException}, whose constructor fills a stack trace and
     * formats a message: a tenth of the simulator's time. Failed with this wrapper, dependents
     * reuse it, and the engine unwraps it to the same rejection.
     */
    private final CompletionException wrapped;

    private Rejection(String message) {
        super(message, null, false, false);
        wrapped = new CompletionException(this);
    }

    /** Fails {@code reply} with this rejection. */
    public void fail(CompletableFuture<?> reply) {
        reply.completeExceptionally(wrapped);
    }
}
