package dev.stagger;

import dev.stagger.internal.Checks;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Function;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * One async call: attempts chained through futures, waits on the clock's scheduler.
 *
 * <p>A call waiting for its retry is held by three objects: this execution (which is also the
 * task the clock runs when the wait is over, so scheduling allocates no {@code Runnable}), the
 * caller's future (a {@link Promise}, which notices being cancelled or completed by hand without
 * registering a callback) and the clock's entry for the wait (on {@link Clock#system()}, a
 * timing-wheel node that cancelling unlinks at once). Nothing else is kept between attempts:
 * the attempt's own future is dropped when it completes.
 *
 * <p>Attempts are observed with {@code handle}, not {@code whenComplete}: on a failed stage,
 * {@code whenComplete} fails the future it returns with a new {@code CompletionException}, whose
 * stack trace costs more than the rest of scheduling a retry.
 */
final class AsyncRetryExecution<T> extends RetryExecution<T>
        implements Runnable, Ambient.Sink, Supplier<CompletableFuture<T>>, Promise.Owner {
    private static final VarHandle CURRENT;
    private static final VarHandle ENDED;

    static {
        try {
            MethodHandles.Lookup lookup = MethodHandles.lookup();
            CURRENT = lookup.findVarHandle(AsyncRetryExecution.class, "current", Object.class);
            ENDED = lookup.findVarHandle(AsyncRetryExecution.class, "ended", boolean.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private static final Object REFUSED = new Object();

    private final Promise<T> promise;
    /**
     * What a cancel must stop: the pending wait (a {@link Clock.Cancellable}) or the attempt in
     * flight (a {@link CompletableFuture}); null between them and after the end.
     */
    private volatile @Nullable Object current;
    /** A cancel on the caller's thread can race an attempt ending on another: one end wins. */
    private volatile boolean ended;
    /**
     * The bulkhead's answer for the next attempt, asked before it without blocking: null (not
     * asked yet), a permit, or {@link #REFUSED}.
     */
    private @Nullable Object bulkheadAnswer;
    /** What an inner retry decided in the current attempt; told from whatever thread the inner ended on. */
    volatile Ambient.@Nullable Decided innerDecided;

    /** Exactly one of {@code plain} and {@code contextual} is given. */
    AsyncRetryExecution(Retry retry, @Nullable Supplier<? extends CompletionStage<T>> plain,
                        @Nullable Function<? super AttemptContext, ? extends CompletionStage<T>> contextual) {
        super(retry, contextual != null ? contextual : java.util.Objects.requireNonNull(plain, "operation"),
                contextual != null);
        this.promise = new Promise<>(this);
    }

    CompletableFuture<T> start() {
        begin();
        if (retry.policy.deadlineNanos() > 0) {
            Ambient.needFrames(); // retries its operation starts are bounded by this call's deadline
        }
        RetryNestingException refused = joinCaller();
        if (refused != null) {
            promise.settleExceptionally(refused);
            return promise;
        }
        if (listeners.length > 0) {
            listenForCall(); // on the caller's thread, as the call begins
        }
        attemptNow();
        return promise;
    }

    @Override
    public void told(Ambient.Decided decided) {
        Ambient.Decided now = innerDecided;
        if (now == null || decided.serial > now.serial) {
            innerDecided = decided;
        }
    }

    @Override
    Ambient.@Nullable Decided takeInnerDecision() {
        Ambient.Decided d = innerDecided;
        if (d != null) {
            innerDecided = null;
        }
        return d;
    }

    /** Invokes the operation for the current attempt (through {@link #runInside}). */
    @Override
    @SuppressWarnings("unchecked")
    public CompletableFuture<T> get() {
        CompletionStage<T> stage = readsContext
                ? ((Function<? super AttemptContext, ? extends CompletionStage<T>>) operation).apply(this)
                : ((Supplier<? extends CompletionStage<T>>) operation).get();
        if (stage == null) {
            throw new NullPointerException("operation returned a null CompletionStage");
        }
        return stage.toCompletableFuture();
    }

    /**
     * Runs {@code work} as this attempt's operation is run: a retry it starts runs inside this
     * call (an async one tells this call how it ended; a sync one ends on this thread and is
     * picked up here), bounded by this call's deadline when frames are kept.
     */
    @Override
    public <R> R runInside(Supplier<R> work) {
        Ambient.Local local = Ambient.local();
        AsyncRetryExecution<?> enclosing = local.starting;
        long serial = Ambient.serial();
        local.starting = this;
        Ambient.@Nullable Frame frame = null;
        try {
            if (Ambient.framed()) {
                frame = local.enter(retry);
                if (retry.policy.deadlineNanos() > 0) {
                    frame.limit(startNanos() + retry.policy.deadlineNanos());
                }
                frame.limit(outerDeadlineAt());
            }
            return work.get();
        } finally {
            if (frame != null) {
                local.exit();
            }
            local.starting = enclosing;
            Ambient.Decided d = local.since(serial); // a sync retry that ran and ended here
            if (d != null) {
                told(d);
            }
        }
    }

    @Override
    BulkheadPermits.@Nullable Permit takeBulkheadPermit(Bulkhead bulkhead) {
        Object answer = bulkheadAnswer;
        bulkheadAnswer = null;
        return answer instanceof BulkheadPermits.Permit ? (BulkheadPermits.Permit) answer : null;
    }

    /** The wait is over: the next attempt. Runs on whatever thread the clock runs tasks on. */
    @Override
    public void run() {
        attemptNow();
    }

    private void attemptNow() {
        try {
            startAttempt();
        } catch (Throwable t) {
            failOnEscape(t);
        }
    }

    @SuppressWarnings("unchecked")
    private void startAttempt() {
        if (promise.isDone()) {
            Object answer = bulkheadAnswer;
            if (answer instanceof BulkheadPermits.Permit) {
                bulkheadAnswer = null;
                // cancelled while it waited; a permit is the bulkhead's
                Checks.notNull("bulkhead", retry.bulkhead).permits.giveBack((BulkheadPermits.Permit) answer);
            }
            return;
        }
        if (retry.bulkhead != null && bulkheadAnswer == null) {
            CompletableFuture<BulkheadPermits.Permit> pending = retry.bulkhead.permits.acquireAsync();
            if (!pending.isDone()) {
                // the attempt starts on the thread that hands the permit over, or the clock's when the wait ends
                pending.thenAccept(p -> {
                    bulkheadAnswer = p != null ? p : REFUSED;
                    attemptNow();
                });
                return;
            }
            BulkheadPermits.Permit p = pending.join();
            bulkheadAnswer = p != null ? p : REFUSED;
        }
        if (!beforeAttempt()) {
            completePromise();
            return;
        }
        long t0 = measure ? retry.clock.nanoTime() : 0;
        CompletableFuture<T> attemptFuture;
        innerDecided = null;
        // What listeners open around the attempt (a tracer's current span) lasts while the operation
        // starts the attempt, on this thread; the attempt's stage completes without it.
        Object scopes = listeners.length > 0 ? openAttemptScopes() : null;
        try {
            attemptFuture = runInside(this); // get(), below: no lambda allocated per attempt
        } catch (Throwable t) {
            closeAttemptScopes(scopes);
            onAttemptDone(null, t, t0);
            return;
        }
        closeAttemptScopes(scopes);
        current = attemptFuture;
        if (retry.policy.attemptTimeoutNanos() > 0) {
            awaitWithTimeout(attemptFuture, t0);
        } else {
            attemptFuture.handle((value, failure) -> {
                onAttemptDone(value, unwrap(failure), t0);
                return null;
            });
        }
        if (promise.isDone()) {
            attemptFuture.cancel(true); // cancelled or completed by hand while this attempt started
        }
    }

    /** Waits for the attempt, or fails it with an {@link AttemptTimeoutException} when it runs too long. */
    private void awaitWithTimeout(CompletableFuture<T> attemptFuture, long t0) {
        AtomicBoolean settled = new AtomicBoolean();
        long timeoutNanos = attemptTimeoutNanos();
        int thisAttempt = attempt;
        Clock.Cancellable timeout = retry.clock.schedule(() -> {
            if (settled.compareAndSet(false, true)) {
                attemptFuture.cancel(true);
                onAttemptDone(null, new AttemptTimeoutException(thisAttempt, Duration.ofNanos(timeoutNanos)), t0);
            }
        }, timeoutNanos);
        attemptFuture.handle((value, failure) -> {
            if (settled.compareAndSet(false, true)) {
                timeout.cancel();
                onAttemptDone(value, unwrap(failure), t0);
            }
            return null;
        });
    }

    private void onAttemptDone(@Nullable T value, @Nullable Throwable failure, long t0) {
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
        ended = true; // not a cancellation: report no end reason at all
        current = null;
        promise.settleExceptionally(t);
    }

    private void handleOutcome(@Nullable T value, @Nullable Throwable failure, long t0) {
        Object attemptInFlight = current;
        if (promise.isDone()) {
            CircuitBreaker breaker = retry.breaker;
            if (breaker != null) {
                breaker.releasePermission(Checks.notNull("permit", permit)); // the outcome is discarded, so the probe never happened
            }
            giveBackBulkheadPermit();
            return;
        }
        long delay = afterAttempt(value, failure, measure ? retry.clock.nanoTime() - t0 : -1);
        if (delay == END) {
            current = null;
            completePromise();
            return;
        }
        Clock.Cancellable wait = retry.clock.schedule(this, delay);
        // The wait may already be over and the next attempt in flight (a zero delay on another
        // thread): then that attempt's future is what a cancel must stop, so keep it.
        CURRENT.compareAndSet(this, attemptInFlight, wait);
        if (promise.isDone()) {
            wait.cancel();
        }
    }

    private void completePromise() {
        settle(promise);
    }

    /** The caller cancelled or completed its future: no further attempts. */
    @Override
    public void onCallerEnded() {
        Object now = CURRENT.getAndSet(this, null);
        if (now instanceof Clock.Cancellable) {
            ((Clock.Cancellable) now).cancel();
        } else if (now instanceof CompletableFuture) {
            ((CompletableFuture<?>) now).cancel(true);
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
        Object[] outcome = new Object[2];
        promise.whenComplete((value, failure) -> { // done already, so this runs at once
            outcome[0] = value;
            outcome[1] = failure;
        });
        Throwable failure = (Throwable) outcome[1];
        return new RetryEvent.CallFinished(retry.name, reason, attempt, retry.engine.maxAttempts, elapsed(),
                failure == null ? outcome[0] : null, failure);
    }

    @Override
    boolean claimEnd(EndReason reason) {
        if (!ENDED.compareAndSet(this, false, true)) {
            return false;
        }
        endReason = reason;
        return true;
    }
}
