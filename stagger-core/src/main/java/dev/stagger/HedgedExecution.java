package dev.stagger;

import dev.stagger.internal.Checks;
import java.time.Duration;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.FutureTask;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Function;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * One hedged call ({@link HedgePolicy}), sync or async: rounds of attempts running side by side,
 * the next hedge armed on the clock while any attempt of the round runs, and a backoff between
 * rounds when every attempt of one failed with a retryable failure.
 *
 * <p>Outcomes arrive on whatever threads the attempts finish on; every decision is taken under one
 * {@link ReentrantLock} (never held while an operation runs or a future is cancelled), by the same
 * {@link RetryEngine} rules and guards as a retrying call: the engine classifies each outcome, an
 * accepted one wins, a stopped one ends the call, and the end of a round is decided by
 * {@link #retryOrEnd}.
 *
 * <p>A sync call runs the first attempt of its first round on the caller's thread, the hedges and
 * later rounds on the policy's executor, and waits on its future once its own attempt is over.
 * When a hedge wins while the caller's attempt runs, the caller's thread is interrupted (see
 * {@link CallerAttempt}) and answers with the hedge's result as soon as its attempt returns: an
 * operation that ignores interrupts holds the caller until it returns. The common sync case (no
 * breaker, throttle, listener, deadline, result predicate or attempt timeout, on the system clock)
 * does not make this object until the hedge delay has passed: {@link HedgeWatch}; nor does the
 * same async case on the system clock, until the delay passes or the first attempt fails:
 * {@link PendingHedge}.
 */
final class HedgedExecution<T> extends RetryExecution<T> implements Promise.Owner, Runnable {
    private final ReentrantLock lock = new ReentrantLock();
    private final Hedging hedging;
    private final boolean sync;
    private final Promise<T> promise;
    /** The attempts running, in the order they started; {@link #live} of them. */
    private final HedgeAttempt[] running;
    private int live;
    /** Attempts started in the current round. */
    private int inRound;
    /** Counts rounds, so a hedge armed in one never fires in the next. */
    private int round;
    private Clock.@Nullable Cancellable timer;
    /** The first attempt of the current round (the one hedges back up); its latency feeds a percentile delay. */
    private @Nullable HedgeAttempt roundFirst;
    /** The first attempt when the caller's thread runs it; set before any other thread sees this call. */
    private @Nullable HedgeAttempt adopted;
    private long armedDelay;
    /** The round and the time the armed hedge is due: a late tick of an earlier arming then does nothing. */
    private int armedRound;
    private long armedAt;
    /** The round whose first attempt outlived the hedge delay, counted then by the overload guard. */
    private int passedRound;

    /**
     * @param operation a {@link Callable} or {@link AttemptCallable} when {@code sync}, else a
     *     {@link Supplier} or a {@link Function} of the context returning a {@link CompletionStage}
     */
    HedgedExecution(Retry retry, Object operation, boolean readsContext, boolean sync) {
        this(retry, operation, readsContext, sync, null);
    }

    /** @param promise the caller's future when a {@link PendingHedge} made it; null to make one owned by this */
    HedgedExecution(Retry retry, Object operation, boolean readsContext, boolean sync, @Nullable Promise<T> promise) {
        super(retry, operation, readsContext);
        this.hedging = Checks.notNull("hedging", retry.hedging); // made only for a retry whose policy hedges
        this.running = new HedgeAttempt[hedging.policy.maxHedges() + 1]; // a round's attempts, the most running at once
        this.sync = sync;
        this.promise = promise != null ? promise : new Promise<>(this);
    }

    /** Starts an async call; the future completes with the caller's answer. */
    CompletableFuture<T> start() {
        open();
        return promise;
    }

    /**
     * A sync call: runs its first attempt on the caller's thread (no hand-off to another thread
     * while no hedge is needed), then waits for the answer, which may be a hedge's.
     */
    T await() throws Exception {
        HedgeAttempt mine = open();
        if (mine != null && !mine.done) {
            armTimeout(mine);
            runAttempt(mine);
        }
        return join();
    }

    /**
     * Begins the call and its first round.
     *
     * @return the first attempt, for the caller's thread to run, when the call is sync; else null
     */
    private @Nullable HedgeAttempt open() {
        begin();
        if (retry.policy.deadlineNanos() > 0) {
            Ambient.needFrames(); // retries inside its attempts are bounded by this call's deadline
        }
        RetryNestingException refused = joinCaller();
        if (refused != null) {
            promise.settleExceptionally(refused);
            return null;
        }
        if (listeners.length > 0) {
            listenForCall();
        }
        return startRound(sync);
    }

    /**
     * The watched fast path's first attempt has run on {@code caller}'s thread since
     * {@code attemptStart} and its hedge delay has passed (see {@link HedgeWatch}): makes the
     * call's state around it and sends the hedge, as the timer of a call started here would.
     * Called off the caller's thread; the caller then hands its outcome to {@link #callerEnded}.
     */
    void adopt(Ambient.Local callerLocal, Thread caller, long attemptStart) {
        sink = callerLocal.sink();
        int r;
        lock.lock();
        try {
            r = takeFirst(attemptStart, new CallerAttempt(caller));
        } finally {
            lock.unlock();
        }
        hedge(r);
    }

    /**
     * The watched fast path's first attempt ended: with {@code failure} before any hedge was sent
     * (this execution then made for the rest of the call), or, after {@link #adopt}, with either
     * outcome. Runs on the caller's thread and returns the call's answer.
     */
    T callerEnded(Ambient.Local callerLocal, long attemptStart, @Nullable Object result, @Nullable Throwable failure,
                  Ambient.@Nullable Decided inner) throws Exception {
        HedgeAttempt a = adopted;
        if (a == null) {
            sink = callerLocal.sink();
            lock.lock();
            try {
                takeFirst(attemptStart, null);
                a = Checks.notNull("adopted", adopted); // takeFirst set it
            } finally {
                lock.unlock();
            }
        } else {
            ((CallerAttempt) Checks.notNull("handle", a.handle)).returned(); // adopt() gave it the caller's
        }
        a.inner = inner;
        outcome(a, result, failure);
        return join();
    }

    /** The caller's future. */
    CompletableFuture<T> promise() {
        return promise;
    }

    /**
     * The async first attempt the operation has started ({@code future}) or failed to start
     * ({@code thrown}), begun at {@code attemptStart} on a thread whose decisions go to
     * {@code to}: adopted, its hedge armed, followed as {@link #start()} would.
     */
    void adoptStarted(long attemptStart, Ambient.Sink to, @Nullable CompletableFuture<T> future,
                      @Nullable Throwable thrown, Ambient.@Nullable Decided inner) {
        begin();
        sink = to;
        int r;
        HedgeAttempt a;
        lock.lock();
        try {
            r = takeFirst(attemptStart, null);
            a = Checks.notNull("adopted", adopted); // takeFirst set it
            a.handle = future;
        } finally {
            lock.unlock();
        }
        if (thrown != null) {
            a.inner = inner;
            outcome(a, null, thrown);
            return;
        }
        arm(r);
        Checks.notNull("future", future).handle((value, failure) -> { // started: not thrown
            outcome(a, value, unwrap(failure));
            return null;
        });
    }

    /**
     * The async first attempt {@code future}, begun at {@code attemptStart} on a thread whose
     * decisions go to {@code to}, has run past its hedge delay ({@link PendingHedge}): adopted,
     * and the hedge sent, as the timer of a call started here would. Its outcome comes through
     * {@link #firstEnded}.
     */
    void adoptPending(long attemptStart, Ambient.Sink to, CompletableFuture<T> future) {
        begin();
        sink = to;
        int r;
        lock.lock();
        try {
            r = takeFirst(attemptStart, future);
        } finally {
            lock.unlock();
        }
        hedge(r);
    }

    /** The adopted first attempt ended ({@link #adoptPending}). */
    void firstEnded(@Nullable Object value, @Nullable Throwable failure) {
        outcome(Checks.notNull("adopted", adopted), value, unwrap(failure)); // adoptPending set it
    }

    /** Registers the running first attempt of the first round, begun at {@code attemptStart}; under the lock. */
    private int takeFirst(long attemptStart, @Nullable Future<?> handle) {
        int r = ++round;
        inRound = 0;
        attempt = 1;
        HedgeAttempt a = track(1, false, null, attemptStart);
        a.handle = handle;
        adopted = a;
        return r;
    }

    /** Waits on the caller's thread for the call's answer. */
    private T join() throws Exception {
        try {
            return promise.get();
        } catch (ExecutionException e) {
            throw Retry.<Exception>sneaky(Checks.notNull("cause", e.getCause())); // the promise failed with it
        } catch (InterruptedException e) {
            Future<?> @Nullable [] losers;
            Throwable last;
            lock.lock();
            try {
                losers = endNow(EndReason.INTERRUPTED);
                last = lastFailure;
            } finally {
                lock.unlock();
            }
            HedgeAttempt.cancelAll(losers);
            Thread.currentThread().interrupt(); // keep the interrupt status, as a retrying call does
            throw Retry.<Exception>sneaky(last != null ? last : e);
        }
    }

    // ---- rounds and hedges ----

    /**
     * Starts a round with its first attempt, when the guards allow one.
     *
     * @param inline whether the caller's thread runs that attempt: it is then returned, not launched
     */
    private @Nullable HedgeAttempt startRound(boolean inline) {
        HedgeAttempt first = null;
        int r;
        lock.lock();
        try {
            if (endReason != null) {
                return null;
            }
            r = ++round;
            inRound = 0;
            if (beforeAttempt()) {
                first = track(attempt, false, permit, retry.clock.nanoTime());
                if (inline) {
                    first.handle = new CallerAttempt(Thread.currentThread());
                }
            }
        } finally {
            lock.unlock();
        }
        if (first == null) {
            settle(promise); // the breaker or the throttle refused the round's first attempt: ended
            return null;
        }
        arm(r); // before the attempt runs: its delay counts from its start
        if (inline) {
            return first;
        }
        launch(first);
        return null;
    }

    /** The backoff after a failed round is over. */
    private void nextRound() {
        try {
            startRound(false);
        } catch (Throwable t) {
            failOnEscape(t);
        }
    }

    /** Arms the next hedge of round {@code r}, when one may follow and the deadline leaves time for its delay. */
    private void arm(int r) {
        lock.lock();
        try {
            if (endReason != null || r != round || live == 0 || inRound > hedging.policy.maxHedges()
                    || attempt >= retry.engine.maxAttempts) {
                return;
            }
            long delay = hedging.delayNanos();
            long remaining = remainingNanos();
            if (remaining >= 0 && remaining <= delay) {
                return; // the deadline would pass before the hedge is sent
            }
            armedDelay = delay;
            armedRound = r;
            armedAt = retry.clock.nanoTime() + delay;
            timer = retry.clock.schedule(this, delay); // this is the tick: no task allocated per call
        } finally {
            lock.unlock();
        }
    }

    /** The delay of round {@code r} is over: sends a hedge if the guards allow one. */
    private void hedge(int r) {
        HedgeAttempt a;
        lock.lock();
        try {
            timer = null;
            if (endReason != null || r != round || live == 0) {
                return;
            }
            if (inRound == 1) { // the round's first attempt alone, still running: it outlived the delay
                hedging.delayPassed();
                passedRound = r;
            }
            if (inRound > hedging.policy.maxHedges() || attempt >= retry.engine.maxAttempts) {
                return;
            }
            if (!hedging.tryHedge()) {
                return; // most attempts are slow, or hedges keep losing: the slowness is shared, a hedge would only add load
            }
            CircuitBreaker.@Nullable Permit p = null;
            CircuitBreaker breaker = retry.breaker;
            if (breaker != null && !(p = breaker.tryAcquirePermission()).isGranted()) {
                return; // no hedge while the breaker refuses; the running attempts go on
            }
            AdaptiveThrottle throttle = retry.throttle;
            if (throttle != null && !throttle.tryAcquire()) {
                release(p);
                return;
            }
            RetryBudget budget = retry.budget;
            if (budget != null && !budget.tryAcquireRetry()) {
                release(p);
                return;
            }
            attempt++;
            a = track(attempt, true, p, retry.clock.nanoTime());
            if (listeners.length > 0) {
                HedgeEvents.hedgeSent(listeners, retry, a.number, armedDelay);
            }
        } finally {
            lock.unlock();
        }
        arm(r);
        launch(a);
    }

    private void release(CircuitBreaker.@Nullable Permit p) {
        if (p != null) {
            Checks.notNull("breaker", retry.breaker).releasePermission(p); // the hedge never happened; a permit is the breaker's
        }
    }

    /** Registers a new running attempt; under the lock. */
    private HedgeAttempt track(int number, boolean isHedge, CircuitBreaker.@Nullable Permit p, long startNanos) {
        HedgeAttempt a = new HedgeAttempt(this, number, isHedge, p, startNanos);
        if (!isHedge) {
            roundFirst = a;
        }
        running[live++] = a;
        inRound++;
        return a;
    }

    /** Starts an attempt's operation; never under the lock. */
    @SuppressWarnings("unchecked")
    private void launch(HedgeAttempt a) {
        if (a.done) {
            return; // the call ended while this attempt was being set up
        }
        armTimeout(a);
        if (sync) {
            FutureTask<Void> task = new FutureTask<>(a, null);
            a.handle = task;
            try {
                hedging.policy.executor().execute(task);
            } catch (RuntimeException rejected) {
                outcome(a, null, rejected);
            }
            return;
        }
        CompletableFuture<T> future;
        // what listeners open around the attempt (a tracer's span) lasts while the operation starts it
        Object scopes = listeners.length > 0 ? openAttemptScopes(a.number) : null;
        try {
            CompletionStage<T> stage = readsContext
                    ? ((Function<? super AttemptContext, ? extends CompletionStage<T>>) operation).apply(this)
                    : ((Supplier<? extends CompletionStage<T>>) operation).get();
            if (stage == null) {
                throw new NullPointerException("operation returned a null CompletionStage");
            }
            future = stage.toCompletableFuture();
        } catch (Throwable t) {
            closeAttemptScopes(scopes);
            outcome(a, null, t);
            return;
        }
        closeAttemptScopes(scopes);
        a.handle = future;
        future.handle((value, failure) -> {
            outcome(a, value, unwrap(failure));
            return null;
        });
        if (a.done) {
            future.cancel(true); // the call ended while this attempt was starting
        }
    }

    /** Arms attempt {@code a}'s timeout, when the policy has one. */
    private void armTimeout(HedgeAttempt a) {
        if (retry.policy.attemptTimeoutNanos() > 0) {
            long timeoutNanos = attemptTimeoutNanos();
            a.timeout = retry.clock.schedule(() -> timedOut(a, timeoutNanos), timeoutNanos);
        }
    }

    /** An attempt's outcome, on the thread it finished on. */
    private void outcome(HedgeAttempt a, @Nullable Object value, @Nullable Throwable failure) {
        Future<?> @Nullable [] losers = null;
        boolean ended = false;
        long wait = END;
        try {
            lock.lock();
            try {
                if (a.done) {
                    hedging.policy.discard(value); // cancelled, or the call ended: nobody receives it
                    return;
                }
                a.done = true;
                forget(a);
                a.cancelTimeout();
                long took = retry.clock.nanoTime() - a.startNanos;
                Decision decision = recordAttempt(a.number, a.permit, value, failure, took, a.inner);
                if (decision.kind() != Decision.Kind.RETRY) {
                    int made = attempt;
                    attempt = a.number; // SUCCESS or RECOVERED by the winner's number, one rule in the engine
                    long next = retry.engine.next(this, decision);
                    attempt = made;
                    EndReason reason = RetryEngine.endReason(next);
                    if (reason.isSuccess()) {
                        observeFirst(a, a.startNanos + took);
                        if (a.hedge) {
                            hedging.hedgeWon();
                            if (listeners.length > 0) {
                                HedgeEvents.hedgeWon(listeners, retry, a.number, live);
                            }
                        }
                        if (retry.budget != null) {
                            retry.budget.onSuccess();
                        }
                    }
                    losers = endNow(reason);
                    ended = true;
                } else if (live == 0) {
                    cancelTimer();
                    wait = retryOrEnd(decision, value, failure);
                    ended = wait == END;
                }
                // else a retryable failure while other attempts run: they may still win
            } finally {
                lock.unlock();
            }
            HedgeAttempt.cancelAll(losers);
            if (ended) {
                settle(promise);
            } else if (wait == 0) {
                startRound(false);
            } else if (wait != END) {
                retry.clock.schedule(this::nextRound, wait);
            }
        } catch (Throwable escaped) {
            failOnEscape(escaped);
        }
    }

    /**
     * Records the latency of the round's first attempt as the round is won at {@code now}: its own
     * when it won, else the time it had run, which it took at least (it was cancelled). Hedges'
     * latencies are left out: they start a delay late, and counting their short times would pull
     * the percentile down and send more hedges. Under the lock.
     */
    private void observeFirst(HedgeAttempt winner, long now) {
        HedgeAttempt first = roundFirst;
        if (first == null || first.number != winner.number && !isRunning(first)) {
            return; // the first attempt failed earlier: its time says nothing of a good answer's
        }
        if (passedRound == round) {
            hedging.observedLate(now - first.startNanos); // counted as slow when its delay passed
        } else {
            hedging.observed(now - first.startNanos);
        }
    }

    private boolean isRunning(HedgeAttempt a) {
        for (int i = 0; i < live; i++) {
            if (running[i] == a) {
                return true;
            }
        }
        return false;
    }

    /** An Error from a listener or a classifier: the caller's future fails with it, as a sync call would throw it. */
    private void failOnEscape(Throwable t) {
        Future<?>[] losers;
        lock.lock();
        try {
            losers = endNow(EndReason.NOT_RETRYABLE);
        } finally {
            lock.unlock();
        }
        HedgeAttempt.cancelAll(losers);
        promise.settleExceptionally(t);
    }

    /**
     * Ends the call with {@code reason} (unless it has ended): no more hedges or rounds, and every
     * running attempt marked cancelled. Under the lock.
     *
     * @return the running attempts' handles, to cancel once the lock is released; null for none
     */
    private Future<?> @Nullable [] endNow(EndReason reason) {
        if (endReason != null) {
            return null;
        }
        cancelTimer();
        round++; // a round's pending start or hedge does nothing now
        Future<?>[] handles = null;
        for (int i = 0; i < live; i++) {
            HedgeAttempt a = running[i];
            running[i] = null;
            a.done = true;
            a.cancelTimeout();
            release(a.permit);
            if (a.handle != null) {
                if (handles == null) {
                    handles = new Future<?>[live];
                }
                handles[i] = a.handle;
            }
            if (listeners.length > 0) {
                HedgeEvents.attemptCancelled(listeners, retry, a.number, reason);
            }
        }
        live = 0;
        end(reason);
        return handles;
    }

    /**
     * Attempt {@code a} ran longer than the policy's {@code attemptTimeout} (shortened to the
     * remaining deadline): it fails with an {@link AttemptTimeoutException}, retryable by default,
     * and is cancelled.
     */
    private void timedOut(HedgeAttempt a, long timeoutNanos) {
        if (a.done) {
            return;
        }
        Future<?> running = a.handle;
        outcome(a, null, new AttemptTimeoutException(a.number, Duration.ofNanos(timeoutNanos)));
        if (running != null) {
            running.cancel(true);
        }
    }

    private void cancelTimer() {
        Clock.Cancellable t = timer;
        if (t != null) {
            timer = null;
            t.cancel();
        }
    }

    private void forget(HedgeAttempt a) {
        for (int i = 0; i < live; i++) {
            if (running[i] == a) {
                System.arraycopy(running, i + 1, running, i, live - i - 1);
                running[--live] = null;
                return;
            }
        }
    }

    /** The caller cancelled or completed the future: no more attempts, the running ones cancelled. */
    @Override
    public void onCallerEnded() {
        Future<?>[] losers;
        lock.lock();
        try {
            losers = endNow(EndReason.CANCELLED);
        } finally {
            lock.unlock();
        }
        HedgeAttempt.cancelAll(losers);
    }

    @Override
    boolean claimEnd(EndReason reason) {
        lock.lock(); // held already on every path but a refusal in beforeAttempt, which holds it too
        try {
            return super.claimEnd(reason);
        } finally {
            lock.unlock();
        }
    }

    /** The deadline of this call and of what it runs inside, on the retry's clock; NO_DEADLINE for none. */
    private long deadlineAt() {
        long at = outerDeadlineAt();
        long own = retry.policy.deadlineNanos();
        return own > 0 ? Math.min(at, startNanos() + own) : at;
    }

    /** The armed hedge is due (the clock's task): sends it, unless the tick is a stale one. */
    @Override
    public void run() {
        try {
            int r;
            lock.lock();
            try {
                if (armedRound != round || retry.clock.nanoTime() < armedAt) {
                    return; // armed for an earlier round, or for an earlier hedge of this one
                }
                r = armedRound;
            } finally {
                lock.unlock();
            }
            hedge(r);
        } catch (Throwable t) {
            failOnEscape(t);
        }
    }

    /** Runs sync attempt {@code a} on the executor's thread, inside this call as a retry in it sees it. */
    @SuppressWarnings("unchecked")
    void runAttempt(HedgeAttempt a) {
        long serial = Ambient.serial();
        Ambient.@Nullable Local local = null;
        Object result = null;
        Throwable failure = null;
        Object scopes = listeners.length > 0 ? openAttemptScopes(a.number) : null;
        try {
            if (Ambient.framed(serial)) {
                Ambient.Local l = Ambient.local();
                Ambient.Frame frame = l.enter(retry);
                local = l;
                frame.limit(deadlineAt());
            }
            result = readsContext ? ((AttemptCallable<T>) operation).call(this) : ((Callable<T>) operation).call();
        } catch (Throwable t) {
            failure = t;
        } finally {
            if (a.handle instanceof CallerAttempt) {
                ((CallerAttempt) a.handle).returned(); // no interrupt from a winning hedge past this point
            }
            if (local != null) {
                local.exit();
            }
            closeAttemptScopes(scopes);
        }
        if (failure != null) {
            a.inner = Ambient.local().since(serial);
        }
        outcome(a, result, failure);
    }
}
