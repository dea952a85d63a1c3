package dev.stagger;

/**
 * Computes a call's answer once retrying has stopped without success. See {@link Fallback}.
 *
 * @param <T> the call's result type
 */
@FunctionalInterface
public interface FallbackFunction<T> {
    /**
     * The answer the caller receives instead of the call's failure. Throwing ends the call with
     * that exception, the call's own failure attached to it as suppressed.
     */
    T apply(FallbackContext context) throws Exception;
}
