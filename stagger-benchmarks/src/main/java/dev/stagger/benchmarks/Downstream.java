package dev.stagger.benchmarks;

import dev.failsafe.function.CheckedSupplier;
import java.util.concurrent.Callable;
import org.springframework.core.retry.Retryable;
import org.springframework.retry.RetryCallback;
import org.springframework.retry.RetryContext;

/**
 * The operation every library wraps: one object implementing each library's callback type, so
 * that all of them run exactly the same body (return a preallocated payload, or throw a
 * preallocated exception once after {@link #failOnce()}). The work is deliberately trivial: the
 * benchmarks measure the wrapper, not the call.
 *
 * <p>Not thread-safe for {@link #failOnce()}; benchmarks that share one instance between threads
 * only ever take the success path.
 */
final class Downstream implements Callable<Object>, CheckedSupplier<Object>, RetryCallback<Object, RuntimeException>,
        Retryable<Object> {

    /** Preallocated and stackless, so no library pays for building an exception. */
    static final class TransientFailure extends RuntimeException {
        private static final long serialVersionUID = 1L;

        TransientFailure() {
            super("transient failure", null, false, false);
        }
    }

    private static final TransientFailure FAILURE = new TransientFailure();

    private final Object payload = new Object();
    private boolean failNext;

    /** What a successful call returns. */
    Object payload() {
        return payload;
    }

    /** The next call throws, the one after it succeeds. */
    void failOnce() {
        failNext = true;
    }

    private Object respond() {
        if (failNext) {
            failNext = false;
            throw FAILURE;
        }
        return payload;
    }

    @Override
    public Object call() {
        return respond();
    }

    @Override
    public Object get() {
        return respond();
    }

    @Override
    public Object doWithRetry(RetryContext context) {
        return respond();
    }

    @Override
    public Object execute() {
        return respond();
    }
}
