package dev.stagger;

/**
 * Receives a {@link Retry}'s events, synchronously on the thread that produced them. Must be
 * thread-safe, quick and must not throw (an exception from a listener is ignored).
 */
public interface RetryListener {

    default void onAttemptFinished(RetryEvent.AttemptFinished event) {
    }

    default void onRetryScheduled(RetryEvent.RetryScheduled event) {
    }

    default void onCallFinished(RetryEvent.CallFinished event) {
    }
}
