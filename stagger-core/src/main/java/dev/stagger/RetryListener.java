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

    /** A failure was left to the inner retry that decided on it (see {@link Nesting#DEFER}). */
    default void onDeferred(RetryEvent.Deferred event) {
    }

    /**
     * Called when {@code retry} is made with this listener among its listeners: by
     * {@link Retry#withListener}, and again for every copy a {@code with...} method makes, so a
     * listener learns the circuit breaker and budget that guard the calls it observes (a metrics
     * listener publishes their state without being bound to them by hand). Called on the thread
     * making the copy, possibly once per call where a client makes a {@code Retry} per call: keep
     * it cheap. A {@link RuntimeException} from it is ignored.
     */
    default void onAttached(Retry retry) {
    }
}
