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
    /** The longest Retry-After a shedding server sends, in seconds. */
    public static final int MAX_RETRY_AFTER = 30;
    private static final Rejection[] SHED = new Rejection[MAX_RETRY_AFTER + 1];

    static {
        for (int s = 1; s <= MAX_RETRY_AFTER; s++) {
            SHED[s] = new Rejection("503 shed, Retry-After " + s, s);
        }
    }

    /**
     * This rejection as a dependent stage of a failed future would carry it. A future failed with
     * the bare rejection makes each dependent stage (such as the engine's {@code whenComplete})
     * wrap it in a new {@code CompletionException}, whose constructor fills a stack trace and
     * formats a message: a tenth of the simulator's time. Failed with this wrapper, dependents
     * reuse it, and the engine unwraps it to the same rejection.
     */
    private final CompletionException wrapped;
    private final int retryAfterSeconds;

    private Rejection(String message) {
        this(message, 0);
    }

    private Rejection(String message, int retryAfterSeconds) {
        super(message, null, false, false);
        this.wrapped = new CompletionException(this);
        this.retryAfterSeconds = retryAfterSeconds;
    }

    /** A request shed with {@code 503} and {@code Retry-After: seconds}, 1 to {@value #MAX_RETRY_AFTER}. */
    public static Rejection shed(int seconds) {
        return SHED[Math.max(1, Math.min(MAX_RETRY_AFTER, seconds))];
    }

    /** The Retry-After it carries, in seconds; 0 for none. */
    public int retryAfterSeconds() {
        return retryAfterSeconds;
    }

    /** Fails {@code reply} with this rejection. */
    public void fail(CompletableFuture<?> reply) {
        reply.completeExceptionally(wrapped);
    }
}
