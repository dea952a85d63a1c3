package dev.stagger;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Function;
import java.util.function.Supplier;

/** One async call: attempts chained through futures, waits on the clock's scheduler. */
final class AsyncRetryExecution<T> extends RetryExecution<T> {
    private final Supplier<? extends CompletionStage<T>> plain;
    private final Function<? super AttemptContext, ? extends CompletionStage<T>> contextual;
    private final CompletableFuture<T> promise = new CompletableFuture<>();
    private volatile Clock.Cancellable pendingWait;
    private volatile CompletableFuture<T> inFlight;
    /** What the caller's future ended with when the caller cancelled or completed it. */
    private volatile Object callerResult;
    private volatile Throwable callerFailure;
    /** A cancel on the caller's thread can race an attempt ending on another: one end wins. */
    private final AtomicBoolean ended = new AtomicBoolean();

    /** Exactly one of {@code plain} and {@code contextual} is given. */
    AsyncRetryExecution(Retry retry, Supplier<? extends CompletionStage<T>> plain,
                        Function<? super AttemptContext, ? extends CompletionStage<T>> contextual) {
        super(retry, null, null, contextual != null);
        this.plain = plain;
        this.contextual = contextual;
    }

    CompletableFuture<T> start() {
        promise.whenComplete((value, failure) -> {
            if (promise.isCancelled() || !ended.get()) {
                callerResult = value;
                callerFailure = failure;
                onCancelled(); // cancelled, or completed by the caller's own hand: no further attempts
            }
        });
        begin();
        attemptNow();
        return promise;
    }

    private void attemptNow() {
        try {
            startAttempt();
        } catch (Throwable t) {
            failOnEscape(t);
        }
    }

    private void startAttempt() {
        if (promise.isDone()) {
            return;
        }
        if (!beforeAttempt()) {
            completePromise();
            return;
        }
        long t0 = retry.clock.nanoTime();
        CompletableFuture<T> attemptFuture;
        try {
            CompletionStage<T> stage = contextual != null ? contextual.apply(this) : plain.get();
            if (stage == null) {
                throw new NullPointerException("operation returned a null CompletionStage");
            }
            attemptFuture = stage.toCompletableFuture();
        } catch (Throwable t) {
            onAttemptDone(null, t, t0);
            return;
        }
        inFlight = attemptFuture;
        AtomicBoolean settled = new AtomicBoolean();
        long timeoutNanos = attemptTimeoutNanos();
        Clock.Cancellable timeout = null;
        if (retry.policy.attemptTimeoutNanos() > 0) {
            int thisAttempt = attempt;
            timeout = retry.clock.schedule(() -> {
                if (settled.compareAndSet(false, true)) {
                    attemptFuture.cancel(true);
                    onAttemptDone(null, new AttemptTimeoutException(thisAttempt, Duration.ofNanos(timeoutNanos)), t0);
                }
            }, timeoutNanos);
        }
        Clock.Cancellable timeoutHandle = timeout;
        attemptFuture.whenComplete((value, failure) -> {
            if (settled.compareAndSet(false, true)) {
                if (timeoutHandle != null) {
                    timeoutHandle.cancel();
                }
                onAttemptDone(value, unwrap(failure), t0);
            }
        });
        if (promise.isDone()) {
            attemptFuture.cancel(true); // cancelled or completed by hand while this attempt started
        }
    }

    private void onAttemptDone(T value, Throwable failure, long t0) {
        try {
            handleOutcome(value, failure, t0);
        } catch (Throwable t) {
            failOnEscape(t);
        }
    }

    /**
     * An Error thrown by a listener or classifier. It runs on a future's callback or the
     * scheduler's thread, where nobody would see it, so the caller's future fails with it (as the
     * sync call would rethrow it) instead of staying pending forever.
     */
    private void failOnEscape(Throwable t) {
        ended.set(true); // not a cancellation: report no end reason at all
        promise.completeExceptionally(t);
    }

    private void handleOutcome(T value, Throwable failure, long t0) {
        if (promise.isDone()) {
            if (retry.breaker != null) {
                retry.breaker.releasePermission(permit); // the outcome is discarded, so the probe never happened
            }
            return;
        }
        long delay = afterAttempt(value, failure, retry.clock.nanoTime() - t0);
        if (delay == END) {
            completePromise();
            return;
        }
        pendingWait = retry.clock.schedule(this::attemptNow, delay);
        if (promise.isDone()) {
            pendingWait.cancel();
        }
    }

    @SuppressWarnings("unchecked")
    private void completePromise() {
        if (promise.isDone()) {
            if (fallbackTakesEnd(endReason)) {
                reportDeferredEnd(null); // cancelled after the end: nobody to answer, but the end is reported
            }
            return; // cancelled meanwhile: the end was already reported as CANCELLED
        }
        if (fallbackTakesEnd(endReason)) {
            FallbackAnswer answer = answerWithFallback();
            if (answer.failure != null) {
                promise.completeExceptionally(answer.failure);
            } else {
                promise.complete((T) answer.value);
            }
            return;
        }
        if (refusal != null) {
            promise.completeExceptionally(refusal);
        } else if (endReason.isSuccess() || lastFailure == null) {
            promise.complete((T) lastResult);
        } else {
            promise.completeExceptionally(finalFailure());
        }
    }

    private void onCancelled() {
        Clock.Cancellable wait = pendingWait;
        if (wait != null) {
            wait.cancel();
        }
        CompletableFuture<T> current = inFlight;
        if (current != null) {
            current.cancel(true);
        }
        end(EndReason.CANCELLED);
    }

    /**
     * A cancelled call reports what the caller's future holds (a CancellationException, or the
     * value it was completed with), not the attempts' failures, which may still be changing on the
     * thread of an attempt finishing at the same moment.
     */
    @Override
    RetryEvent.CallFinished finishedEvent(EndReason reason) {
        if (reason != EndReason.CANCELLED) {
            return super.finishedEvent(reason);
        }
        Throwable failure = callerFailure;
        return new RetryEvent.CallFinished(retry.name, reason, attempt, retry.engine.maxAttempts, elapsed(),
                failure == null ? callerResult : null, failure);
    }

    @Override
    boolean claimEnd(EndReason reason) {
        if (!ended.compareAndSet(false, true)) {
            return false;
        }
        endReason = reason;
        return true;
    }

    private static Throwable unwrap(Throwable t) {
        while ((t instanceof CompletionException || t instanceof ExecutionException) && t.getCause() != null) {
            t = t.getCause();
        }
        return t;
    }
}
