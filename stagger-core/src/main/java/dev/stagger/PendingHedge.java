package dev.stagger;

import dev.stagger.internal.Checks;
import dev.stagger.internal.TimerWheel;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.BiFunction;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * The async hedged call's light path (a retry needing nothing per attempt: no listener, breaker,
 * throttle, deadline, result predicate or attempt timeout, no call keeping frames), taken by
 * {@link #start}: a first stage already completed with a value answers at once; a pending one on
 * the system clock is followed by this one object, which is at once the hedge timer's entry
 * ({@link HedgeWatch#watch(PendingHedge)}: pushed onto a lock-free list, never removed), the
 * callback of the first attempt's future and the owner of the caller's future. A first attempt
 * that answers before the delay ends the call here: nothing but this object, the caller's future
 * and the callback's registration is allocated, and the timer is disarmed by the state's
 * compare-and-set (its entry is dropped when the watcher next sees it, or when it comes due).
 *
 * <p>Any other turn makes the call's {@link HedgedExecution} around the running attempt, which
 * decides everything from then on by the same engine, budget and guards as any hedged call: the
 * delay passing (the watcher fires the entry; the hand-over adopts the attempt and sends the
 * hedge), or the first attempt failing before it. The state word orders the races between the
 * attempt's outcome, the watcher's firing and the caller cancelling.
 */
final class PendingHedge<T> extends TimerWheel.Node implements BiFunction<T, Throwable, Void>, Promise.Owner, Runnable {
    private static final VarHandle STATE;

    static {
        try {
            STATE = MethodHandles.lookup().findVarHandle(PendingHedge.class, "state", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /** Waiting for the first attempt, the hedge armed. */
    private static final int PENDING = 0;
    /** Ended here (answered or cancelled; failed, until the execution is made): the timer does nothing. */
    private static final int DONE = 1;
    /** The delay passed: the hand-over is making the execution. */
    private static final int FIRED = 2;
    /** The first attempt ended while the hand-over ran: it hands the stored outcome over. */
    private static final int ARRIVED = 3;
    /** The execution is made and follows the call: outcomes and cancels go to it. */
    private static final int HANDED = 4;

    private final Retry retry;
    private final Supplier<? extends CompletionStage<T>> operation;
    private final Promise<T> promise;
    private final CompletableFuture<T> first;
    /** Whom the call tells when it ends without success: found on the caller's thread. */
    private final Ambient.Sink sink;
    private final long start;
    /** When the hedge is due, on {@link System#nanoTime()}. */
    final long due;
    private volatile int state;
    /** Set by a caller ending the call while the hand-over runs; it then ends the execution. */
    private volatile boolean callerEnded;
    /** The first attempt's outcome, stored when it arrived during the hand-over (ARRIVED). */
    private @Nullable T value;
    private @Nullable Throwable failure;
    /** Published by HANDED. */
    private @Nullable HedgedExecution<T> execution;
    /** The next entry pushed onto the watch's incoming list. */
    @Nullable PendingHedge<?> nextIncoming;

    private PendingHedge(Retry retry, Supplier<? extends CompletionStage<T>> operation, CompletableFuture<T> first,
                         long start, long due) {
        this.retry = retry;
        this.operation = operation;
        this.first = first;
        this.start = start;
        this.due = due;
        this.sink = Ambient.local().sink();
        this.promise = new Promise<>(this);
    }

    /**
     * An async hedged call on the light path (see the class comment).
     *
     * @param serial {@link Ambient#serial()} as the call began
     */
    static <T> CompletableFuture<T> start(Retry retry, Supplier<? extends CompletionStage<T>> operation, long serial) {
        long start = retry.clock.coarseNanoTime();
        CompletableFuture<T> future = null;
        Throwable thrown = null;
        try {
            CompletionStage<T> stage = operation.get();
            if (stage == null) {
                throw new NullPointerException("operation returned a null CompletionStage");
            }
            future = stage.toCompletableFuture();
        } catch (Throwable t) {
            thrown = t;
        }
        if (future != null && future.isDone()) {
            if (!future.isCompletedExceptionally()) {
                // nothing can be slower than the delay: no execution, no timer
                T value = future.join();
                succeeded(retry, start);
                return CompletableFuture.completedFuture(value);
            }
        } else if (future != null && retry.clock == Clock.system()) {
            return watched(retry, operation, future, start).promise;
        }
        HedgedExecution<T> e = new HedgedExecution<>(retry, operation, false, false);
        e.adoptStarted(start, Ambient.local().sink(), future, thrown,
                thrown == null ? null : Ambient.local().since(serial));
        return e.promise();
    }

    /** Follows the pending first attempt {@code first}, begun at {@code start}, its hedge armed on the watch. */
    static <T> PendingHedge<T> watched(Retry retry, Supplier<? extends CompletionStage<T>> operation,
                                       CompletableFuture<T> first, long start) {
        PendingHedge<T> call = new PendingHedge<>(retry, operation, first, start, start + hedging(retry).delayNanos());
        HedgeWatch.watch(call);
        first.handle(call);
        return call;
    }

    /** The caller's future. */
    CompletableFuture<T> promise() {
        return promise;
    }

    /** What a call answered by its first attempt tells, begun at {@code start} on the coarse clock. */
    private static void succeeded(Retry retry, long start) {
        Hedging hedging = hedging(retry);
        if (hedging.timesAttempts()) {
            hedging.observed(retry.clock.coarseNanoTime() - start);
        }
        RetryBudget budget = retry.budget;
        if (budget != null) {
            budget.onSuccess();
        }
    }

    /** The retry's hedging: this path is taken only for a retry whose policy hedges. */
    private static Hedging hedging(Retry retry) {
        return Checks.notNull("hedging", retry.hedging);
    }

    /** Whether the watch must still keep the entry (the first attempt has not ended and nothing fired). */
    boolean waiting() {
        return state == PENDING;
    }

    /** The first attempt's future completed: on whatever thread completed it. */
    @Override
    public Void apply(@Nullable T result, @Nullable Throwable thrown) {
        while (true) {
            int s = state;
            if (s == PENDING) {
                if (!STATE.compareAndSet(this, PENDING, DONE)) {
                    continue;
                }
                if (thrown == null) {
                    succeeded(retry, start);
                    promise.settle(result);
                } else {
                    // a failure before the delay: the engine decides on it as on any hedged call's
                    HedgedExecution<T> e = new HedgedExecution<>(retry, operation, false, false, promise);
                    e.adoptStarted(start, sink, null, RetryExecution.unwrap(thrown), null);
                    execution = e;
                    state = HANDED; // a cancel from now on goes to the execution
                    if (callerEnded) {
                        e.onCallerEnded();
                    }
                }
                return null;
            }
            if (s == FIRED) {
                value = result;
                failure = thrown;
                if (STATE.compareAndSet(this, FIRED, ARRIVED)) {
                    return null; // the hand-over delivers it once the execution is made
                }
                continue;
            }
            if (s == HANDED) {
                Checks.notNull("execution", execution).firstEnded(result, thrown); // published by HANDED
            } else {
                hedging(retry).policy.discard(result); // the caller ended the call: nobody receives it
            }
            return null;
        }
    }

    /** The delay passed (the watcher's look, on its thread): the hand-over runs off it. */
    void fire() {
        if (tryFire()) {
            java.util.concurrent.ForkJoinPool.commonPool().execute(this);
        }
    }

    /** Takes the call from the timer for the hand-over ({@link #run}); false when it has ended here. */
    boolean tryFire() {
        return STATE.compareAndSet(this, PENDING, FIRED);
    }

    /** The hand-over (see {@link #fire}): makes the execution around the running attempt and sends the hedge. */
    @Override
    public void run() {
        HedgedExecution<T> e = new HedgedExecution<>(retry, operation, false, false, promise);
        try {
            e.adoptPending(start, sink, first);
        } finally {
            execution = e;
            if (!STATE.compareAndSet(this, FIRED, HANDED)) { // ARRIVED
                state = HANDED;
                T v = value;
                Throwable f = failure;
                value = null;
                failure = null;
                e.firstEnded(v, f);
            }
            if (callerEnded) {
                e.onCallerEnded();
            }
        }
    }

    /** The caller cancelled or completed its future. */
    @Override
    public void onCallerEnded() {
        callerEnded = true;
        while (true) {
            int s = state;
            if (s == PENDING) {
                if (STATE.compareAndSet(this, PENDING, DONE)) {
                    first.cancel(true);
                    return;
                }
            } else {
                if (s == HANDED) {
                    Checks.notNull("execution", execution).onCallerEnded(); // published by HANDED; a second end does nothing
                }
                return; // FIRED or ARRIVED: the hand-over sees callerEnded
            }
        }
    }
}
