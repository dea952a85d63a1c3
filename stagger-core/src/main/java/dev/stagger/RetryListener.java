package dev.stagger;

import org.jspecify.annotations.Nullable;

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

    /** A hedged call sent a hedge ({@link HedgePolicy}). */
    default void onHedgeSent(RetryEvent.HedgeSent event) {
    }

    /** A hedged call's accepted outcome came from a hedge. */
    default void onHedgeWon(RetryEvent.HedgeWon event) {
    }

    /** A running attempt of a hedged call was cancelled: another won, or the call ended. */
    default void onAttemptCancelled(RetryEvent.AttemptCancelled event) {
    }

    /** A failure was left to the inner retry that decided on it (see {@link Nesting#DEFER}). */
    default void onDeferred(RetryEvent.Deferred event) {
    }

    /**
     * Called once per call of a retry with this listener among its listeners, as the call begins
     * and before its first attempt, on the caller's thread (the thread calling {@code call} or
     * {@code callAsync}). Returns the listener that hears the rest of this call's events in place
     * of this one: this one by default. A listener that keeps state per call (a tracer's span for
     * the call, a child per attempt) returns a fresh object here; every other listener leaves the
     * default, and then the call allocates nothing for it. A {@link RuntimeException} from it
     * leaves this listener in place. Never called on the retry's fast path: a retry with no
     * listener has no call to hear.
     *
     * @param retry the retry making the call
     */
    default RetryListener forCall(Retry retry) {
        return this;
    }

    /**
     * Called just before an attempt's operation is invoked, on the thread invoking it. What it
     * returns, when not null, is closed as soon as that invocation returns or throws: for
     * {@code call}, when the attempt has ended; for {@code callAsync}, when the operation has
     * returned its stage (the attempt then goes on without it). Called for every attempt that is
     * made, never for one a breaker or a throttle refuses. A tracer makes the attempt's span the
     * current one here, so the spans the operation starts (an HTTP client's) are its children. A
     * {@link RuntimeException} from it is ignored (the attempt runs without a scope).
     *
     * @param name the retry's name
     * @param attempt 1 for the first attempt
     */
    default @Nullable Scope onAttemptStarting(String name, int attempt) {
        return null;
    }

    /** What {@link #onAttemptStarting} opens around one invocation of the operation. */
    @FunctionalInterface
    interface Scope extends AutoCloseable {
        /** Closes the scope; must not throw (a {@link RuntimeException} is ignored). */
        @Override
        void close();
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
