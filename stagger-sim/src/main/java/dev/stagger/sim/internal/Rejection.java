package dev.stagger.sim.internal;

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

    private Rejection(String message) {
        super(message, null, false, false);
    }
}
