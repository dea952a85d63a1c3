package dev.stagger.spring;

/**
 * Decides, in code, how a breaker counts an exception, where a list of classes in
 * {@code stagger.circuit-breakers.<name>.record-exceptions} / {@code .ignore-exceptions} cannot
 * say it (an exception whose meaning is in a field: a vendor error code, an HTTP status carried by
 * an exception). Declare it as a bean; it is asked for every exception a named breaker records,
 * with the breaker's name, before the properties. Beans are asked in their {@code @Order}, and
 * the first verdict other than {@link Verdict#UNDECIDED} stands.
 *
 * <p>Called on the thread that recorded the call, possibly twice for one exception (whether it
 * is ignored, then whether it is a failure): it must be fast, give the same verdict for the same
 * exception and not throw (an exception from it counts the call as a failure).
 */
@FunctionalInterface
public interface BreakerFailureClassifier {

    /** How a breaker counts an exception. */
    enum Verdict {
        /** A failure of the downstream: it counts towards opening the breaker. */
        FAILURE,
        /** Evidence that the downstream works (a refusal it answered correctly). */
        SUCCESS,
        /** Neither a success nor a failure: the call does not count (a half-open probe is given back). */
        IGNORED,
        /** No opinion: the next classifier, then the breaker's properties, decide. */
        UNDECIDED
    }

    /**
     * @param circuitBreaker the breaker's name
     * @param failure what the guarded call threw
     */
    Verdict classify(String circuitBreaker, Throwable failure);
}
