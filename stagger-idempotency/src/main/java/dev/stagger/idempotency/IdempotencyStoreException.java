package dev.stagger.idempotency;

/** A store could not be read or written (database down, disk full). Nothing was decided. */
public final class IdempotencyStoreException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public IdempotencyStoreException(String message, Throwable cause) {
        super(message, cause);
    }
}
