package dev.stagger;

import dev.stagger.internal.Checks;
import java.time.Duration;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Set;
import java.util.Collections;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import org.jspecify.annotations.Nullable;

/**
 * One call in one process: the sync loop, and what {@link AsyncRetryExecution} shares with it (the
 * breaker, the budget, the listeners, the caller's answer). What follows each attempt is decided
 * by the {@link RetryEngine}, on this object's state. Used by one thread at a time (async attempts
 * follow each other with happens-before edges through the futures and the scheduler).
 */
class RetryExecution<T> extends RetryEngine.Work {
    static final long END = -1;

    final Retry retry;
    /**
     * The operation: a {@link Callable} or, when {@link #readsContext}, an {@link AttemptCallable}
     * (the async subclass keeps its {@code Supplier} or {@code Function} here). One field for
     * both, because a million pending async calls pay for every field.
     */
    final Object operation;
    final boolean readsContext;
    /** Whether attempts are timed (a listener or a breaker wants their duration). */
    final boolean measure;
    private long startNanos;
    /**
     * Every failure so far, for the caller's exception: the first failure alone, then a
     * {@code List<Throwable>} once there are two (most calls never get there).
     */
    private @Nullable Object failures;
    @Nullable EndReason endReason;
    @Nullable RetryRefusedException refusal;
    /** The breaker's permit for the current attempt. */
    CircuitBreaker.@Nullable Permit permit;
    /** The bulkhead's permit the current attempt holds; null between attempts and without a bulkhead. */
    BulkheadPermits.@Nullable Permit bulkheadPermit;
    /** This sync call's frame on its thread's {@link Ambient} stack; null for an async call or without frames. */
    Ambient.@Nullable Frame own;
    /** {@link Ambient#serial()} as the current attempt began (its low 32 bits): a decision told later was made during it. */
    int attemptSerial;
    /**
     * Whom this call tells when it ends without success: set by an async call as it starts (the
     * thread or async call that started it); null for a sync call (its thread). An
     * {@link Ambient.Outer} when the call runs inside a deadline, which it also carries.
     */
    Ambient.@Nullable Sink sink;
    /**
     * The listeners hearing this call: the retry's own array, replaced by {@link #listenForCall()}
     * only when a listener answers {@link RetryListener#forCall} with a per-call one.
     */
    RetryListener[] listeners;

    RetryExecution(Retry retry, @Nullable Callable<T> plain, @Nullable AttemptCallable<T> contextual) {
        this(retry, contextual != null ? contextual : java.util.Objects.requireNonNull(plain, "operation"), contextual != null);
    }

    /** @param readsContext whether the operation is given the {@link AttemptContext} */
    RetryExecution(Retry retry, Object operation, boolean readsContext) {
        this.retry = retry;
        this.operation = operation;
        this.readsContext = readsContext;
        this.measure = retry.listeners.length > 0 || (retry.breaker != null && retry.breaker.measuresDuration());
        this.listeners = retry.listeners;
    }

    /** Asks each listener for the one that hears this call ({@link AttemptScopes#forCall}); only when the retry has listeners. */
    final void listenForCall() {
        listeners = AttemptScopes.forCall(retry);
    }

    /** Tells the listeners the current attempt is about to run ({@link AttemptScopes#open}). */
    final @Nullable Object openAttemptScopes() {
        return AttemptScopes.open(retry.name, listeners, attempt);
    }

    /** As {@link #openAttemptScopes()} for attempt {@code number} (a hedged call's attempts overlap). */
    final @Nullable Object openAttemptScopes(int number) {
        return AttemptScopes.open(retry.name, listeners, number);
    }

    /** Closes what {@link #openAttemptScopes} opened, the last opened first. */
    static void closeAttemptScopes(@Nullable Object opened) {
        AttemptScopes.close(opened);
    }

    /**
     * Reads the start time when anything needs it: the precise clock when a listener, the
     * operation or a classifier may read the elapsed time; the coarse clock (a volatile read, no
     * OS call) when only the deadline does. A coarse start is a past reading of the same monotonic
     * clock, at most one ticker period old (about 1 ms, more if the ticker thread is descheduled),
     * so the deadline is measured from up to that much before the call began: a call may end with
     * DEADLINE that much early, never late.
     */
    final void begin() {
        if (retry.listeners.length > 0 || readsContext || retry.policy.hasCustomClassifier()) {
            startNanos = retry.clock.nanoTime();
        } else if (retry.policy.deadlineNanos() > 0) {
            startNanos = retry.clock.coarseNanoTime();
        }
    }

    /** A sync call on its frame {@code frame}: learns the deadline of what it runs inside. */
    final RetryExecution<T> nest(Ambient.Frame frame) {
        own = frame;
        if (frame.deadlineAt != Ambient.NO_DEADLINE) {
            sink = new Ambient.Outer(null, frame.deadlineAt);
        }
        return this;
    }

    /**
     * As a call whose attempts run elsewhere starts, on the caller's thread: whom to tell how it
     * ends (the thread, or the async call whose operation is starting it) and the deadline of what
     * it runs inside.
     *
     * @return the refusal when this retry or the one around refuses nesting, else null
     */
    final @Nullable RetryNestingException joinCaller() {
        Ambient.Local local = Ambient.local();
        Ambient.Sink to = local.sink();
        sink = to;
        if (Ambient.framed()) {
            Ambient.Frame around = local.top();
            if (around != null) { // started inside another retry's attempt or a scope
                if (around.nesting() == Nesting.REFUSE || retry.nesting == Nesting.REFUSE) {
                    return local.refuse(retry, around);
                }
                long deadlineAt = around.deadlineOn(retry.clock);
                if (deadlineAt != Ambient.NO_DEADLINE) {
                    sink = new Ambient.Outer(to, deadlineAt);
                }
            }
        }
        return null;
    }

    /** A fast-path call whose first attempt holds the bulkhead's permit {@code held} (null: none). */
    final RetryExecution<T> holding(BulkheadPermits.@Nullable Permit held) {
        bulkheadPermit = held;
        return this;
    }

    /** A sync call without a frame whose first attempt began when the decisions' serial was {@code serial}. */
    final RetryExecution<T> since(long serial) {
        attemptSerial = (int) serial;
        return this;
    }

    @Override
    final long outerRemainingNanos() {
        long at = outerDeadlineAt();
        if (at == Ambient.NO_DEADLINE) {
            return -1;
        }
        return Math.max(0, at - retry.clock.nanoTime());
    }

    /** The deadline of the retries and scopes around this call, on this retry's clock; NO_DEADLINE for none. */
    final long outerDeadlineAt() {
        Ambient.Sink s = sink;
        return s instanceof Ambient.Outer ? ((Ambient.Outer) s).deadlineAt : Ambient.NO_DEADLINE;
    }

    /** The decision of a retry that ran inside the attempt that just ended, if one ended without success. */
    Ambient.@Nullable Decided takeInnerDecision() {
        return Ambient.local().since(attemptSerial);
    }

    @Override
    final RetryEngine engine() {
        return retry.engine;
    }

    /** When the call began, as {@link #begin()} read it (0 when nothing needed it). */
    final long startNanos() {
        return startNanos;
    }

    @Override
    final long elapsedNanos() {
        return retry.clock.nanoTime() - startNanos;
    }

    @Override
    final Backoff.Schedule startSchedule() {
        return retry.policy.backoff().start(retry.random);
    }

    // ---- sync ----

    final T runSync() throws Exception {
        begin();
        boolean heard = listeners.length > 0;
        if (heard) {
            listenForCall();
        }
        if (own != null && retry.policy.deadlineNanos() > 0) {
            own.limit(startNanos + retry.policy.deadlineNanos());
        }
        while (true) {
            if (!beforeAttempt()) {
                return conclude();
            }
            long t0 = measure ? retry.clock.nanoTime() : 0;
            Object result = null;
            Throwable failure = null;
            Object scopes = heard ? openAttemptScopes() : null;
            try {
                result = readsContext ? ((AttemptCallable<?>) operation).call(this) : ((Callable<?>) operation).call();
            } catch (Throwable t) {
                failure = t;
            } finally {
                closeAttemptScopes(scopes);
            }
            long delay = afterAttempt(result, failure, measure ? retry.clock.nanoTime() - t0 : -1);
            if (delay == END || !sleep(delay)) {
                return conclude();
            }
        }
    }

    /**
     * Continues a fast-path call whose first attempt threw {@code first}; {@code startNanos} is
     * when it began, read as {@link #begin()} would (only needed with a deadline).
     */
    final T runSyncAfterFirstFailure(Throwable first, long startNanos) throws Exception {
        this.startNanos = startNanos;
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
                result = ((Callable<?>) operation).call();
            } catch (Throwable t) {
                failure = t;
            }
            delay = afterAttempt(result, failure, -1);
            if (delay == END || !sleep(delay)) {
                return conclude();
            }
        }
    }

    /**
     * Ends a fast-path call whose first attempt the throttle refused (the throttle has counted the
     * refusal); {@code startNanos} as in {@link #runSyncAfterFirstFailure}.
     */
    final T runSyncRefusedFirst(long startNanos) throws Exception {
        this.startNanos = startNanos;
        refusedByThrottle(Checks.notNull("throttle", retry.throttle)); // only a throttle refuses here
        return conclude();
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
        EndReason endReason = ended();
        if (fallbackTakesEnd(endReason)) {
            FallbackAnswer answer = answerWithFallback();
            if (answer.failure != null) {
                throw Retry.<Exception>sneaky(answer.failure);
            }
            return asResult(answer.value);
        }
        if (refusal != null) {
            throw refusal;
        }
        if (endReason.isSuccess() || lastFailure == null) {
            return asResult(lastResult);
        }
        throw Retry.<Exception>sneaky(finalFailure());
    }

    /** The last failure, with the earlier ones attached as suppressed (once, however often called). */
    final Throwable finalFailure() {
        Throwable last = Checks.notNull("lastFailure", lastFailure); // called only once an attempt failed
        if (failures instanceof List) {
            Set<Throwable> seen = Collections.newSetFromMap(new IdentityHashMap<>());
            seen.add(last);
            for (Throwable t : last.getSuppressed()) {
                seen.add(t);
            }
            @SuppressWarnings("unchecked")
            List<Throwable> all = (List<Throwable>) failures;
            for (Throwable earlier : all) {
                if (seen.add(earlier)) {
                    last.addSuppressed(earlier);
                }
            }
        }
        return last;
    }

    // ---- shared decision logic ----

    /**
     * Counts the attempt, takes the bulkhead's permit and asks the breaker and the throttle; false
     * (call ended) when one refuses.
     */
    final boolean beforeAttempt() {
        attempt++;
        attemptSerial = (int) Ambient.serial();
        Bulkhead bulkhead = retry.bulkhead;
        if (bulkhead != null) {
            BulkheadPermits.Permit p;
            try {
                p = takeBulkheadPermit(bulkhead);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                attempt--;
                lastFailure = e; // what the caller receives: nothing else ended the call
                remember(e);
                end(EndReason.INTERRUPTED);
                return false;
            }
            if (p == null) {
                attempt--;
                refusal = new BulkheadFullException(bulkhead.name(), bulkhead.limit(), lastFailure,
                        lastFailure == null ? lastResult : null);
                end(EndReason.BULKHEAD_FULL);
                return false;
            }
            bulkheadPermit = p;
        }
        CircuitBreaker breaker = retry.breaker;
        if (breaker != null && !(permit = breaker.tryAcquirePermission()).isGranted()) {
            attempt--;
            giveBackBulkheadPermit();
            refusal = breaker.openException(lastFailure, lastFailure == null ? lastResult : null);
            end(EndReason.CIRCUIT_OPEN);
            return false;
        }
        AdaptiveThrottle throttle = retry.throttle;
        if (throttle != null && !throttle.tryAcquire()) {
            if (breaker != null) {
                breaker.releasePermission(Checks.notNull("permit", permit)); // the attempt never happened
            }
            giveBackBulkheadPermit();
            attempt--;
            refusedByThrottle(throttle);
            return false;
        }
        return true;
    }

    /**
     * The bulkhead's permit for the attempt about to run, or null when it refused: a sync call waits
     * here, up to the bulkhead's {@code maxWait}; an async call has waited before, without blocking.
     */
    BulkheadPermits.@Nullable Permit takeBulkheadPermit(Bulkhead bulkhead) throws InterruptedException {
        return bulkhead.permits.acquire();
    }

    /** Gives back the bulkhead's permit of an attempt that never ran (no sample for an adaptive limit). */
    final void giveBackBulkheadPermit() {
        BulkheadPermits.Permit p = bulkheadPermit;
        if (p != null) {
            bulkheadPermit = null;
            Checks.notNull("bulkhead", retry.bulkhead).permits.giveBack(p); // a permit is the bulkhead's
        }
    }

    /** Ends the call on the throttle's refusal of the next attempt, which is not counted as one. */
    private void refusedByThrottle(AdaptiveThrottle throttle) {
        refusal = new ThrottledException(throttle.name(), throttle.rejectionProbability(), lastFailure,
                lastFailure == null ? lastResult : null);
        end(EndReason.THROTTLED);
    }

    /**
     * Has the engine decide what follows an attempt's outcome, tells the breaker and the throttle,
     * gives the bulkhead's permit back, then asks the guards (breaker, budget) and tells the listeners.
     *
     * @return the wait before the next attempt, or {@link #END} when the call has ended
     */
    final long afterAttempt(@Nullable Object result, @Nullable Throwable failure, long attemptNanos) {
        Decision decision;
        try {
            decision = recordAttempt(attempt, permit, result, failure, attemptNanos, null);
        } catch (RuntimeException | Error e) { // a listener's Error: the permit must not leak
            giveBackBulkheadPermit();
            throw e;
        }
        BulkheadPermits.Permit p = bulkheadPermit;
        if (p != null) { // given back before the wait: a retry holds no permit while it backs off
            bulkheadPermit = null;
            Checks.notNull("bulkhead", retry.bulkhead).permits.release(p, decision.isRetry()); // a permit is the bulkhead's
        }
        return retryOrEnd(decision, result, failure);
    }

    /**
     * Has the engine classify attempt {@code number}'s outcome, applies the one-layer rule, keeps
     * the failure, tells the breaker and the throttle and reports {@link RetryEvent.AttemptFinished}.
     *
     * @param inner what a retry inside this attempt decided, when known already (a hedged attempt on
     *     another thread); null to look it up the usual way ({@link #takeInnerDecision()})
     * @return the decision, after the one-layer rule
     */
    final Decision recordAttempt(int number, CircuitBreaker.@Nullable Permit attemptPermit, @Nullable Object result,
                                 @Nullable Throwable failure, long attemptNanos, Ambient.@Nullable Decided inner) {
        RetryEngine engine = retry.engine;
        Decision decision = engine.classify(this, result, failure);
        if (failure != null && decision.isRetry()) {
            if (failure instanceof RetryNestingException) {
                decision = Decision.stop();
            } else if (retry.nesting != Nesting.RETRY_AGAIN) {
                Ambient.Decided decided = inner != null ? inner : takeInnerDecision();
                if (decided != null && decided.covers(failure)) {
                    decision = Decision.stop(); // one layer retries a failure: the inner one has decided on it
                    deferred(decided, failure);
                }
            }
        }
        remember(lastFailure);
        CircuitBreaker breaker = retry.breaker;
        if (breaker != null) {
            breaker.record(Checks.notNull("permit", attemptPermit), result, failure, attemptNanos); // asked for with the breaker
        }
        AdaptiveThrottle throttle = retry.throttle;
        if (throttle != null) {
            throttle.record(result, failure, decision);
        }
        if (listeners.length > 0) {
            RetryEvent.AttemptFinished e = new RetryEvent.AttemptFinished(retry.name, number, engine.maxAttempts,
                    Duration.ofNanos(Math.max(0, attemptNanos)), result, failure, decision);
            for (RetryListener l : listeners) {
                try {
                    l.onAttemptFinished(e);
                } catch (RuntimeException ignored) {
                    // listeners must not change the call's outcome
                }
            }
        }
        return decision;
    }

    /**
     * After a classified outcome with no attempt left running: the engine's wait before the next
     * attempt, unless the breaker has opened or the budget refuses the retry; or the end.
     *
     * @return the wait before the next attempt, or {@link #END} when the call has ended
     */
    final long retryOrEnd(Decision decision, @Nullable Object result, @Nullable Throwable failure) {
        RetryEngine engine = retry.engine;
        long delay = engine.next(this, decision);
        if (RetryEngine.isEnd(delay)) {
            EndReason reason = RetryEngine.endReason(delay);
            RetryBudget budget = retry.budget;
            if (reason.isSuccess() && budget != null) {
                budget.onSuccess();
            }
            end(reason);
            return END;
        }
        CircuitBreaker breaker = retry.breaker;
        if (breaker != null && breaker.state() == CircuitBreaker.State.OPEN) {
            refusal = breaker.openException(failure, failure == null ? result : null);
            end(EndReason.CIRCUIT_OPEN);
            return END;
        }
        RetryBudget budget = retry.budget;
        if (budget != null && !budget.tryAcquireRetry()) {
            refusal = new BudgetExhaustedException(budget.name(), failure, failure == null ? result : null);
            end(EndReason.BUDGET);
            return END;
        }
        if (listeners.length > 0) {
            RetryEvent.RetryScheduled e = new RetryEvent.RetryScheduled(retry.name, attempt + 1, engine.maxAttempts,
                    Duration.ofNanos(delay), decision, result, failure);
            for (RetryListener l : listeners) {
                try {
                    l.onRetryScheduled(e);
                } catch (RuntimeException ignored) {
                    // listeners must not change the call's outcome
                }
            }
        }
        return delay;
    }

    private void deferred(Ambient.Decided inner, Throwable failure) {
        if (listeners.length == 0) {
            return;
        }
        RetryEvent.Deferred e = new RetryEvent.Deferred(retry.name, attempt, inner.inner, inner.attempts, inner.reason,
                failure);
        for (RetryListener l : listeners) {
            try {
                l.onDeferred(e);
            } catch (RuntimeException ignored) {
                // listeners must not change the call's outcome
            }
        }
    }

    /**
     * Tells the retry this call runs inside that it ended without success, so that one does not
     * retry what this one decided on. A call a fallback answers tells nothing (its caller got an
     * answer, not this failure).
     */
    private void tellOuter(EndReason reason) {
        if (reason.isSuccess() || reason == EndReason.CANCELLED || fallbackTakesEnd(reason)) {
            return;
        }
        Ambient.Sink s = sink;
        (s != null ? s : Ambient.local().decisions).told(new Ambient.Decided(retry.name, attempt, reason, thrownAtEnd(reason)));
    }

    /** Keeps every failure for the caller's exception (the earlier ones become suppressed). */
    final void remember(@Nullable Throwable failure) {
        if (failure == null) {
            return;
        }
        if (failures == null) {
            failures = failure;
        } else if (failures instanceof Throwable) {
            List<Throwable> all = new ArrayList<>(4);
            all.add((Throwable) failures);
            all.add(failure);
            failures = all;
        } else {
            @SuppressWarnings("unchecked")
            List<Throwable> all = (List<Throwable>) failures;
            all.add(failure);
        }
    }

    /** Records the end reason and tells the listeners, once. */
    final boolean end(EndReason reason) {
        if (!claimEnd(reason)) {
            return false;
        }
        tellOuter(reason);
        if (listeners.length > 0 && !fallbackTakesEnd(reason)) {
            notifyFinished(finishedEvent(reason));
        }
        return true;
    }

    private void notifyFinished(RetryEvent.CallFinished e) {
        for (RetryListener l : listeners) {
            try {
                l.onCallFinished(e);
            } catch (RuntimeException ignored) {
                // listeners must not change the call's outcome
            }
        }
    }

    /** The end as the caller sees it: the result returned or the exception thrown. */
    RetryEvent.CallFinished finishedEvent(EndReason reason) {
        Throwable thrown = thrownAtEnd(reason);
        return new RetryEvent.CallFinished(retry.name, reason, attempt, retry.engine.maxAttempts, elapsed(),
                thrown == null ? lastResult : null, thrown);
    }

    /** What the caller receives without a fallback: the exception, or null when a result is returned. */
    private @Nullable Throwable thrownAtEnd(EndReason reason) {
        return refusal != null ? refusal : reason.isSuccess() || lastFailure == null ? null : finalFailure();
    }

    // ---- fallback: runs at the call's boundary, once the end is known ----

    /** Whether the retry's fallback may answer a call ending with {@code reason}; its end event then waits for it. */
    final boolean fallbackTakesEnd(@Nullable EndReason reason) {
        Fallback<?> fallback = retry.fallback;
        return fallback != null && fallback.considers(reason);
    }

    /** Runs the fallback for the ended call (once: the caller's answer is made here only), then reports the end. */
    final FallbackAnswer answerWithFallback() {
        EndReason endReason = ended();
        Throwable thrown = thrownAtEnd(endReason);
        FallbackAnswer answer = Checks.notNull("fallback", retry.fallback).answer(retry.name, endReason, attempt, lastFailure, lastResult,
                thrown == null ? lastResult : null, thrown, retry.breaker, retry.clock);
        reportDeferredEnd(answer);
        return answer;
    }

    /** Reports an end that {@link #end} left to the fallback; {@code answer} is null when the fallback never ran. */
    final void reportDeferredEnd(@Nullable FallbackAnswer answer) {
        if (listeners.length == 0) {
            return;
        }
        EndReason endReason = ended();
        if (answer == null) {
            notifyFinished(finishedEvent(endReason));
            return;
        }
        notifyFinished(new RetryEvent.CallFinished(retry.name, endReason, attempt, retry.engine.maxAttempts,
                elapsed(), answer.failure == null ? answer.value : null, answer.failure, answer.run));
    }

    /** Answers the caller's future once the call has ended (unless the caller ended it first). */
    @SuppressWarnings("unchecked")
    final void settle(Promise<T> promise) {
        if (promise.isDone()) {
            if (fallbackTakesEnd(this.endReason)) {
                reportDeferredEnd(null); // cancelled after the end: nobody to answer, but the end is reported
            }
            return; // cancelled meanwhile: the end was already reported as CANCELLED
        }
        EndReason endReason = ended();
        if (fallbackTakesEnd(endReason)) {
            FallbackAnswer answer = answerWithFallback();
            if (answer.failure != null) {
                promise.settleExceptionally(answer.failure);
            } else {
                promise.settle((T) answer.value);
            }
            return;
        }
        if (refusal != null) {
            promise.settleExceptionally(refusal);
        } else if (endReason.isSuccess() || lastFailure == null) {
            promise.settle((T) lastResult);
        } else {
            promise.settleExceptionally(finalFailure());
        }
    }

    /** The reason the call ended; read only once it has ({@link #end} set it). */
    final EndReason ended() {
        return Checks.notNull("endReason", endReason);
    }

    /**
     * The operation's result as the caller's type. {@code T} is the operation's own: null only when
     * the operation returned null, which its type then allows (standard-mode NullAway cannot express
     * {@code T extends @Nullable Object}).
     */
    @SuppressWarnings({"unchecked", "NullAway"}) // the operation's null result, returned as its caller's T
    static <T> T asResult(@Nullable Object value) {
        return (T) value;
    }

    /** Sets the end reason if none is set yet; a sync call ends on one thread, so no atomics. */
    boolean claimEnd(EndReason reason) {
        if (endReason != null) {
            return false;
        }
        endReason = reason;
        return true;
    }

    /** The failure a future reports, without the {@code CompletionException}/{@code ExecutionException} wrappers. */
    static @Nullable Throwable unwrap(@Nullable Throwable t) {
        while ((t instanceof CompletionException || t instanceof ExecutionException) && t.getCause() != null) {
            t = t.getCause();
        }
        return t;
    }
}
