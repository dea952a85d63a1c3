package dev.stagger.spring;

import dev.stagger.Backoff;
import dev.stagger.RandomSource;
import dev.stagger.RetryEngine;
import dev.stagger.RetryPolicy;
import java.time.Duration;
import org.springframework.util.backoff.BackOff;
import org.springframework.util.backoff.BackOffExecution;

/**
 * A Stagger {@link RetryPolicy} as Spring Framework 7's
 * {@link org.springframework.core.retry.RetryPolicy}, for code that builds its own
 * {@code new RetryTemplate(policy)}: the attempts, the backoff with its jitter (one schedule per
 * execution, so decorrelated and other stateful backoffs behave as in Stagger), the deadline as
 * Spring's timeout, and the classifier's verdict on each exception.
 *
 * <p>What Spring's policy SPI cannot carry: a budget and a circuit breaker (the SPI sees no
 * successes, so a budget would never be refilled, and no call before its first attempt), a
 * {@code Retry-After}-style minimum wait from the classifier ({@code shouldRetry} answers yes or
 * no), retries on results, listeners and meters. For those use {@link StaggerRetryTemplate},
 * which runs every execution through the Stagger retry itself. The classifier is shown each
 * exception with the context of a first attempt (Spring does not pass the attempt number, nor the
 * previous failure): classifiers that look at the attempt should not be used here.
 *
 * <p>Immutable and thread-safe; each {@link #getBackOff()} start is one execution's schedule.
 */
public final class StaggerRetryPolicy implements org.springframework.core.retry.RetryPolicy {
    private final RetryPolicy policy;
    private final String name;
    private final RetryEngine engine;

    private StaggerRetryPolicy(String name, RetryPolicy policy) {
        this.name = name;
        this.policy = policy;
        this.engine = RetryEngine.of(name, policy);
    }

    /** {@code policy} as Spring's retry policy; {@code name} is what the classifier's context reports. */
    public static StaggerRetryPolicy of(String name, RetryPolicy policy) {
        if (name == null || policy == null) {
            throw new NullPointerException((name == null ? "name" : "policy") + " must not be null");
        }
        return new StaggerRetryPolicy(name, policy);
    }

    /** The Stagger policy. */
    public RetryPolicy policy() {
        return policy;
    }

    /**
     * The verdict of Stagger's {@link RetryEngine} on {@code throwable}: the policy's classifier,
     * guarded as in a {@link dev.stagger.Retry} (a classifier that throws or returns nothing stops
     * the retries, its own exception added to {@code throwable} as suppressed), and never a retry
     * of an {@link Error} or an {@link InterruptedException}, whatever the classifier says.
     */
    @Override
    public boolean shouldRetry(Throwable throwable) {
        if (throwable == null) {
            throw new NullPointerException("throwable must not be null");
        }
        return engine.decide(engine.firstAttempt(), null, throwable).decision().isRetry();
    }

    @Override
    public Duration getTimeout() {
        return policy.deadline().orElseGet(org.springframework.core.retry.RetryPolicy.super::getTimeout);
    }

    @Override
    public BackOff getBackOff() {
        Backoff backoff = policy.backoff();
        int maxAttempts = policy.maxAttempts();
        return () -> new BackOffExecution() {
            private final Backoff.Schedule schedule = backoff.start(RandomSource.threadLocal());
            private int retries;

            @Override
            public long nextBackOff() {
                retries++;
                if (retries >= maxAttempts) {
                    return STOP;
                }
                long nanos = schedule.nextDelayNanos(retries);
                return nanos / 1_000_000 + (nanos % 1_000_000 == 0 ? 0 : 1); // Spring sleeps whole milliseconds
            }
        };
    }

    @Override
    public String toString() {
        return "StaggerRetryPolicy{" + name + ", " + policy + "}";
    }
}
