package dev.stagger;

/**
 * Receives a {@link Retry}'s events, synchronously on the thread that produced them. Must be
 * thread-safe, quick and must not throw: a {@link RuntimeException} from a listener is ignored;
 * an {@link Error} ends the call with that error (thrown by {@code call}, failing the future of
 * {@code callAsync}).
 */
public interface RetryListener {

    default void onAttemptFinished(RetryEvent.AttemptFinished event) {
    }

    default void onRetryScheduled(RetryEvent.RetryScheduled event) {
    }

    default void onCallFinished(RetryEvent.CallFinished event) {
    }
}
