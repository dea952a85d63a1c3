package dev.stagger.shedding;

/**
 * Receives a {@link LoadSheddingFilter}'s events, synchronously on the request thread that caused
 * them. Must be thread-safe and quick (it runs while a client waits for its 503), and must not
 * throw: a {@link RuntimeException} from a listener is ignored. Events are only created when a
 * listener is set.
 */
public interface SheddingListener {

    /** A request was shed. */
    default void onShed(SheddingEvent.Shed event) {
    }

    /**
     * The limit changed. Reported by the request whose sample changed it; changes that race may
     * be reported out of order ({@link LoadSheddingFilter#limit()} is the limit in force).
     */
    default void onLimitChanged(SheddingEvent.LimitChanged event) {
    }
}
