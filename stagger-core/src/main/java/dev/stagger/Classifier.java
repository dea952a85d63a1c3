package dev.stagger;

import org.jspecify.annotations.Nullable;

/**
 * Turns one attempt's outcome into a {@link Decision}. Exactly one of {@code result} and
 * {@code failure} is meaningful: {@code failure} is non-null when the attempt threw.
 *
 * <p>Must be thread-safe and should be cheap: it runs after every attempt. A {@link Retry} never
 * retries an {@link Error} (the JVM is in trouble) or an {@link InterruptedException} (someone
 * wants this thread to stop), whatever its classifier says.
 */
@FunctionalInterface
public interface Classifier {

    Decision classify(@Nullable Object result, @Nullable Throwable failure, AttemptContext context);

    /**
     * The default: retry any {@link Exception} except {@link InterruptedException}; never retry an
     * {@link Error}; accept every result.
     */
    static Classifier defaults() {
        return (result, failure, context) -> {
            if (failure == null) {
                return Decision.accept();
            }
            return failure instanceof Exception && !(failure instanceof InterruptedException)
                    ? Decision.retry() : Decision.stop();
        };
    }
}
