package dev.stagger;

import java.time.Duration;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.Collections;
import java.util.concurrent.Callable;

/**
 * One call's state and the decision logic shared by the sync loop and {@link AsyncRetryExecution}.
 * Used by one thread at a time (async attempts follow each other with happens-before edges
 * through the futures and the scheduler).
 */
class RetryExecution<T> implements AttemptContext {
    static final long END = -1;

    final Retry retry;
    private final Callable<T> plain;
    private final AttemptCallable<T> contextual;
    private final boolean measure;
    private long startNanos;
    int attempt;
    private Backoff.Schedule schedule;
    Object lastResult;
    Throwable lastFailure;
    /** The first failure; the list holds every failure only once there are two (most calls never get there). */
    private Throwable firstFailure;
    private List<Throwable> failures;
    EndReason endReason;
    RetryRefusedException refusal;
    /** The breaker's permit for the current attempt. */
    CircuitBreaker.Permit permit;

    RetryExecution(Retry retry, Callable<T> plain, AttemptCallable<T> contextual) {
        this.retry = retry;
        this.plain = plain;
        this.contextual = contextual;
        this.measure = retry.listeners.length > 0 || (retry.breaker != null && retry.breaker.measuresDuration());
    }

    /** Reads the start time when anything needs it. */
    final void begin() {
        if (retry.policy.deadlineNanos() > 0 || retry.listeners.length > 0 || contextual != null
                || retry.policy.hasCustomClassifier()) {
            startNanos = retry.clock.nanoTime();
        }
    }

    // ---- sync ----

    final T runSync() throws Exception {
        begin();
        while (true) {
            if (!beforeAttempt()) {
                return conclude();
            }
            long t0 = measure ? retry.clock.nanoTime() : 0;
            Object result = null;
            Throwable failure = null;
            try {
                result = contextual != null ? contextual.call(this) : plain.call();
            } catch (Throwable t) {
                failure = t;
            }
            long delay = afterAttempt(result, failure, measure ? retry.clock.nanoTime() - t0 : -1);
            if (delay == END || !sleep(delay)) {
                return conclude();
            }
        }
    }

    /** Continues a fast-path call whose first attempt threw {@code first}. */
    final T runSyncAfterFirstFailure(Throwable first) throws Exception {
        attempt = 1;
        long delay = afterAttempt(null, first, -1);
        if (delay == END || !sleep(delay)) {
            return conclude();
        }
        while (true) {
            if (!beforeAttempt()) {
                return conclude();
            }
            Object result = null;
            Throwable failure = null;
            try {
                result = plain.call();
            } catch (Throwable t) {
                failure = t;
            }
            delay = afterAttempt(result, failure, -1);
            if (delay == END || !sleep(delay)) {
                return conclude();
            }
        }
    }

    private boolean sleep(long delay) {
        try {
            retry.clock.sleep(delay);
            return true;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            end(EndReason.INTERRUPTED);
            return false;
        }
    }

    /** The caller's answer once the call has ended. */
    @SuppressWarnings("unchecked")
    final T conclude() throws Exception {
        if (refusal != null) {
            throw refusal;
        }
        if (endReason.isSuccess() || lastFailure == null) {
            return (T) lastResult;
        }
        throw Retry.<Exception>sneaky(finalFailure());
    }

    /** The last failure, with the earlier ones attached as suppressed (once, however often called). */
    final Throwable finalFailure() {
        Throwable last = lastFailure;
        if (failures != null && failures.size() > 1) {
            Set<Throwable> seen = Collections.newSetFromMap(new IdentityHashMap<>());
            seen.add(last);
            for (Throwable t : last.getSuppressed()) {
                seen.add(t);
            }
            for (Throwable earlier : failures) {
                if (seen.add(earlier)) {
                    last.addSuppressed(earlier);
                }
            }
        }
        return last;
    }

    // ---- shared decision logic ----

    /** Counts the attempt and asks the breaker; false (call ended) when it refuses. */
    final boolean beforeAttempt() {
        attempt++;
        CircuitBreaker breaker = retry.breaker;
        if (breaker != null && !(permit = breaker.tryAcquirePermission()).isGranted()) {
            attempt--;
            refusal = breaker.openException(lastFailure, lastFailure == null ? lastResult : null);
            end(EndReason.CIRCUIT_OPEN);
            return false;
        }
        return true;
    }

    /**
     * Classifies an attempt's outcome.
     *
     * @return the wait before the next attempt, or {@link #END} when the call has ended
     */
    final long afterAttempt(Object result, Throwable failure, long attemptNanos) {
        lastResult = result;
        lastFailure = failure;
        if (failure != null) {
            if (firstFailure == null) {
                firstFailure = failure;
            } else {
                if (failures == null) {
                    failures = new ArrayList<>(4);
                    failures.add(firstFailure);
                }
                failures.add(failure);
            }
        }
        RetryPolicy policy = retry.policy;
        Decision decision;
        if (failure == null && policy.acceptsAllResults()) {
            decision = Decision.accept();
        } else {
            try {
                decision = policy.classifier().classify(result, failure, this);
            } catch (RuntimeException classifierFailed) {
                if (failure != null) {
                    failure.addSuppressed(classifierFailed);
                } else {
                    lastFailure = classifierFailed;
                }
                decision = Decision.stop();
            }
            if (decision.isRetry() && (failure instanceof Error || failure instanceof InterruptedException)) {
                decision = Decision.stop(); // not even a custom classifier may retry these
            }
        }
        if (retry.breaker != null) {
            retry.breaker.record(permit, result, failure, attemptNanos);
        }
        if (retry.listeners.length > 0) {
            RetryEvent.AttemptFinished e = new RetryEvent.AttemptFinished(retry.name, attempt, policy.maxAttempts(),
                    Duration.ofNanos(Math.max(0, attemptNanos)), result, failure, decision);
            for (RetryListener l : retry.listeners) {
                try {
                    l.onAttemptFinished(e);
                } catch (RuntimeException ignored) {
                    // listeners must not change the call's outcome
                }
            }
        }
        switch (decision.kind()) {
            case ACCEPT:
                if (retry.budget != null) {
                    retry.budget.onSuccess();
                }
                end(attempt == 1 ? EndReason.SUCCESS : EndReason.RECOVERED);
                return END;
            case STOP:
                end(failure instanceof InterruptedException ? EndReason.INTERRUPTED : EndReason.NOT_RETRYABLE);
                return END;
            default:
                break;
        }
        if (attempt >= policy.maxAttempts()) {
            end(EndReason.EXHAUSTED);
            return END;
        }
        CircuitBreaker breaker = retry.breaker;
        if (breaker != null && breaker.state() == CircuitBreaker.State.OPEN) {
            refusal = breaker.openException(failure, failure == null ? result : null);
            end(EndReason.CIRCUIT_OPEN);
            return END;
        }
        if (schedule == null) {
            schedule = policy.backoff().start(retry.random);
        }
        long delay = schedule.nextDelayNanos(attempt);
        long hint = decision.minDelayNanos();
        if (hint > 0) {
            delay = hint + delay < 0 ? Long.MAX_VALUE : hint + delay; // the hint is a minimum; jitter goes on top
        }
        long deadline = policy.deadlineNanos();
        if (deadline > 0 && delay >= deadline - (retry.clock.nanoTime() - startNanos)) {
            end(EndReason.DEADLINE);
            return END;
        }
        if (retry.budget != null && !retry.budget.tryAcquireRetry()) {
            refusal = new BudgetExhaustedException(retry.budget.name(), failure, failure == null ? result : null);
            end(EndReason.BUDGET);
            return END;
        }
        if (retry.listeners.length > 0) {
            RetryEvent.RetryScheduled e = new RetryEvent.RetryScheduled(retry.name, attempt + 1, policy.maxAttempts(),
                    Duration.ofNanos(delay), decision, result, failure);
            for (RetryListener l : retry.listeners) {
                try {
                    l.onRetryScheduled(e);
                } catch (RuntimeException ignored) {
                    // listeners must not change the call's outcome
                }
            }
        }
        return delay;
    }

    /** Records the end reason and tells the listeners, once. */
    final boolean end(EndReason reason) {
        if (!claimEnd(reason)) {
            return false;
        }
        if (retry.listeners.length > 0) {
            RetryEvent.CallFinished e = finishedEvent(reason);
            for (RetryListener l : retry.listeners) {
                try {
                    l.onCallFinished(e);
                } catch (RuntimeException ignored) {
                    // listeners must not change the call's outcome
                }
            }
        }
        return true;
    }

    /** The end as the caller sees it: the result returned or the exception thrown. */
    RetryEvent.CallFinished finishedEvent(EndReason reason) {
        Throwable thrown = refusal != null ? refusal
                : reason.isSuccess() || lastFailure == null ? null : finalFailure();
        return new RetryEvent.CallFinished(retry.name, reason, attempt, retry.policy.maxAttempts(), elapsed(),
                thrown == null ? lastResult : null, thrown);
    }

    /** Sets the end reason if none is set yet; a sync call ends on one thread, so no atomics. */
    boolean claimEnd(EndReason reason) {
        if (endReason != null) {
            return false;
        }
        endReason = reason;
        return true;
    }

    // ---- AttemptContext ----

    @Override
    public String name() {
        return retry.name;
    }

    @Override
    public int attempt() {
        return attempt;
    }

    @Override
    public int maxAttempts() {
        return retry.policy.maxAttempts();
    }

    @Override
    public Duration elapsed() {
        return Duration.ofNanos(Math.max(0, retry.clock.nanoTime() - startNanos));
    }

    @Override
    public Optional<Duration> remaining() {
        long deadline = retry.policy.deadlineNanos();
        if (deadline == 0) {
            return Optional.empty();
        }
        return Optional.of(Duration.ofNanos(Math.max(0, deadline - (retry.clock.nanoTime() - startNanos))));
    }

    @Override
    public Optional<Duration> attemptTimeout() {
        long timeout = retry.policy.attemptTimeoutNanos();
        Optional<Duration> remaining = remaining();
        if (timeout == 0) {
            return remaining;
        }
        Duration t = Duration.ofNanos(timeout);
        return Optional.of(remaining.isPresent() && remaining.get().compareTo(t) < 0 ? remaining.get() : t);
    }

    @Override
    public Throwable lastFailure() {
        return attempt <= 1 ? null : lastFailure;
    }

    long attemptTimeoutNanos() {
        return attemptTimeout().map(Duration::toNanos).orElse(0L);
    }
}
