package dev.stagger.spring;

import dev.stagger.Retry;
import org.springframework.core.retry.RetryException;
import org.springframework.core.retry.RetryListener;
import org.springframework.core.retry.RetryPolicy;
import org.springframework.core.retry.RetryTemplate;
import org.springframework.core.retry.Retryable;

/**
 * Spring Framework 7's {@link RetryTemplate} (and so its {@code RetryOperations}) running every
 * execution through a Stagger {@link Retry}: its policy (attempts, backoff and jitter, deadline,
 * classification, retries on results), its circuit breaker and budget, its listeners and meters.
 * Code written against {@code RetryTemplate} or {@code RetryOperations} switches by being given
 * this bean instead ({@code stagger.spring-retry.template=<retry name>} defines one).
 *
 * <p>As Spring's template: {@link #execute} returns the result, or throws a
 * {@link RetryException} whose cause is the last failure (earlier ones suppressed on it) — also
 * when the breaker or the budget refused a retry (the cause is then Stagger's
 * {@code RetryRefusedException}, the failure it stopped on suppressed or as its cause).
 * {@link #invoke(java.util.function.Supplier)} and {@link #invoke(Runnable)} go through
 * {@code execute}. An {@link Error} is never retried and is thrown as it is.
 *
 * <p>Not carried: Spring {@link RetryListener}s and a replaced {@link RetryPolicy} (the Stagger
 * retry decides; listeners are Stagger {@code RetryListener}s on the retry) —
 * {@link #setRetryPolicy} and {@link #setRetryListener} refuse. {@link #getRetryPolicy()} reports
 * the retry's policy as a {@link StaggerRetryPolicy}.
 *
 * <p>Thread-safe.
 */
public class StaggerRetryTemplate extends RetryTemplate {
    private final Retry retry;

    public StaggerRetryTemplate(Retry retry) {
        super(StaggerRetryPolicy.of(nonNull(retry).name(), retry.policy()));
        this.retry = retry;
    }

    private static Retry nonNull(Retry retry) {
        if (retry == null) {
            throw new NullPointerException("retry must not be null");
        }
        return retry;
    }

    /** The Stagger retry running every execution. */
    public Retry retry() {
        return retry;
    }

    @Override
    public <R> R execute(Retryable<R> retryable) throws RetryException {
        if (retryable == null) {
            throw new NullPointerException("retryable must not be null");
        }
        try {
            return retry.call(() -> attempt(retryable));
        } catch (Exception failure) {
            throw new RetryException("'" + retryable.getName() + "' failed under Stagger retry '" + retry.name() + "'",
                    failure);
        }
    }

    private static <R> R attempt(Retryable<R> retryable) throws Exception {
        try {
            return retryable.execute();
        } catch (Exception | Error e) {
            throw e;
        } catch (Throwable other) {
            throw new java.lang.reflect.UndeclaredThrowableException(other); // neither: classified as any exception
        }
    }

    /** Refused: the Stagger retry decides. */
    @Override
    public void setRetryPolicy(RetryPolicy retryPolicy) {
        if (retry == null) {
            super.setRetryPolicy(retryPolicy); // Spring's own constructor
            return;
        }
        throw new UnsupportedOperationException("the Stagger retry '" + retry.name() + "' decides; configure it under stagger.retries");
    }

    /** Refused: add a Stagger {@code RetryListener} to the retry instead. */
    @Override
    public void setRetryListener(RetryListener retryListener) {
        if (retry == null) {
            super.setRetryListener(retryListener);
            return;
        }
        throw new UnsupportedOperationException("listeners of the Stagger retry '" + retry.name()
                + "' are Stagger RetryListeners (RetryCustomizer beans)");
    }

    @Override
    public String toString() {
        return "StaggerRetryTemplate{" + retry + "}";
    }
}
