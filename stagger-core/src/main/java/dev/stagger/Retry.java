package dev.stagger;

import dev.stagger.internal.Checks;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Function;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * Runs operations under a {@link RetryPolicy}, optionally guarded by a {@link CircuitBreaker}, a
 * shared {@link RetryBudget}, an {@link AdaptiveThrottle} and a {@link Bulkhead}. What follows each attempt is decided by the {@link RetryEngine}
 * (the same rules a job worker follows); the breaker and the budget may then refuse a retry, and the breaker and the throttle
 * an attempt. Immutable and thread-safe: one {@code Retry} serves any number of
 * concurrent calls; the {@code with...} methods return new instances.
 *
 * <h2>Sync: {@link #call(Callable)}</h2>
 * On success returns the result. On giving up it rethrows the <em>last</em> failure unchanged,
 * with earlier attempts' failures attached as suppressed exceptions; when a result (not an
 * exception) was being retried, the last result is returned. When the breaker, the budget or the
 * throttle refuses an attempt it throws a {@link RetryRefusedException} subtype with the last failure as
 * cause. Interruption during a wait stops at once and keeps the thread's interrupt status.
 * Waits never hold a lock, so virtual threads are never pinned.
 *
 * <h2>Async: {@link #callAsync(Supplier)}, {@link #callAsync(Function)}</h2>
 * Waits are scheduled on the clock's scheduler, never by blocking a thread. Cancelling the
 * returned future (or completing it by hand) stops further attempts and cancels the attempt in
 * flight; the call ends with reason CANCELLED. The policy's
 * {@code attemptTimeout} fails an attempt that runs too long with an {@link AttemptTimeoutException}
 * (retryable under the default classifier).
 *
 * <h2>Fallback: {@link #withFallback(Fallback)}</h2>
 * A call that ends without success may be answered by a {@link Fallback} (a stale value, a
 * deferred answer, a message for the user) instead of its failure, chosen by the end reason and
 * the failure; it runs once, after the end, and the call's end event then says so.
 *
 * <h2>Inside another retry: {@link #withNesting(Nesting)}</h2>
 * Each failure is retried by one layer, the innermost Stagger retry that sees it: a failure this
 * retry decided on (retried to the end, or judged not retryable) is not retried again by a retry
 * it runs inside, and this retry's deadline never outlives that one's. See {@link Nesting}.
 *
 * <h2>Cost</h2>
 * With no listener, breaker or result predicate, a call whose first attempt succeeds reads no OS
 * clock and allocates nothing beyond what the operation allocates (it enters the thread's stack of
 * running retries: a {@code ThreadLocal} read and a few field writes); a budget or a throttle adds no
 * allocation (the throttle reads the coarse clock, a volatile read, twice: to ask and to record), nor
 * does a fixed {@link Bulkhead} with a free permit (a compare-and-set to take it, a decrement and a
 * volatile read to give it back). A deadline
 * costs one volatile read: the call's start comes from {@link Clock#coarseNanoTime()}, so the
 * deadline is measured from up to one coarse tick (about 1 ms) before the call began — a call may
 * end with {@code DEADLINE} that much early, never late. A hedged call ({@link HedgePolicy}) on the
 * same conditions, plus no deadline, whose first attempt answers before the hedge delay allocates
 * nothing either: {@code call} arms its hedge in the thread's own slot (two compare-and-sets and a
 * coarse-clock read), and {@code callAsync} answers a stage complete on return without arming any.
 */
public final class Retry {
    private static final RetryListener[] NO_LISTENERS = new RetryListener[0];

    final String name;
    final RetryPolicy policy;
    final @Nullable CircuitBreaker breaker;
    final @Nullable RetryBudget budget;
    /** Whether {@link #budget} is the default one (shared by name), replaced on a change of clock. */
    final boolean defaultBudget;
    /** What this retry does inside or around another. */
    final Nesting nesting;
    final @Nullable AdaptiveThrottle throttle;
    /** Whose permit every attempt holds while it runs; null without one. */
    final @Nullable Bulkhead bulkhead;
    final RetryListener[] listeners;
    /** Answers a call that ended without success; null without one. */
    final @Nullable Fallback<?> fallback;
    final Clock clock;
    final RandomSource random;
    /** The policy's hedging with its recent latencies; null when the policy does not hedge. */
    final @Nullable Hedging hedging;
    /** Decides what follows each attempt; built once per Retry, so a call allocates none. */
    final RetryEngine engine;
    /**
     * Whether {@link #call(Callable)} runs the first attempt inline, with no execution object: no
     * breaker and no listener (nothing to time or report) and no result to classify. A budget, a
     * throttle and a bulkhead with a free permit are asked and told inline (a result is then always
     * accepted by the classifier); a full bulkhead leaves it to the execution, which waits or refuses.
     */
    private final boolean fastPath;
    /**
     * The fast path needing no frame of its own (no deadline, not refusing nesting): while no
     * call in the process keeps frames ({@link Ambient}), the call reads one volatile counter,
     * asks the throttle if there is one, calls the operation and, on success, tells the budget.
     */
    private final boolean frameless;
    /** Whether a call keeps a frame even while no other call does: a deadline, or nesting refused. */
    private final boolean needsFrame;
    /**
     * Whether a sync hedged call may take {@link HedgeWatch}'s fast path (unless it runs inside a
     * deadline or a refusing retry): its first attempt on the caller's thread, its hedge timer a
     * deadline in the thread's slot, nothing allocated unless the delay passes.
     */
    private final boolean watchedHedge;
    /**
     * A hedged call needing nothing per attempt (no breaker, throttle, listener, result predicate,
     * attempt timeout or frame): an async one whose first stage is complete on return makes no
     * execution.
     */
    private final boolean lightHedge;

    private Retry(String name, RetryPolicy policy, @Nullable CircuitBreaker breaker, @Nullable RetryBudget budget,
                  boolean defaultBudget, @Nullable AdaptiveThrottle throttle, @Nullable Bulkhead bulkhead,
                  RetryListener[] listeners, Clock clock, RandomSource random, @Nullable Fallback<?> fallback,
                  Nesting nesting, @Nullable Hedging hedging) {
        this.name = name;
        this.defaultBudget = defaultBudget;
        this.nesting = nesting;
        this.fallback = fallback;
        this.policy = policy;
        this.breaker = breaker;
        this.budget = budget;
        this.throttle = throttle;
        this.bulkhead = bulkhead;
        this.listeners = listeners;
        this.clock = clock;
        this.random = random;
        this.engine = new RetryEngine(name, policy, clock, random, policy.maxAttempts());
        this.hedging = policy.hedge().isEmpty() ? null : hedging != null ? hedging : new Hedging(policy.hedge().get(), clock);
        if (this.hedging != null && bulkhead != null) {
            throw new IllegalArgumentException("bulkhead must not guard a hedged retry, got bulkhead '" + bulkhead.name()
                    + "' with the policy's hedging"); // each hedge would need its own permit
        }
        this.fastPath = this.hedging == null && breaker == null && listeners.length == 0 && policy.acceptsAllResults();
        this.needsFrame = policy.deadlineNanos() > 0 || nesting == Nesting.REFUSE;
        this.frameless = fastPath && !needsFrame;
        this.lightHedge = this.hedging != null && breaker == null && throttle == null && listeners.length == 0
                && policy.acceptsAllResults() && policy.attemptTimeoutNanos() <= 0 && !needsFrame;
        this.watchedHedge = lightHedge && clock == Clock.system();
        if (nesting == Nesting.REFUSE) {
            Ambient.needFrames(); // a retry around this one must be known as it starts
        }
        for (RetryListener listener : listeners) {
            try {
                listener.onAttached(this);
            } catch (RuntimeException ignored) {
                // a listener must not stop a Retry from being made
            }
        }
    }

    /**
     * A retry called {@code name} running {@code policy}, with the default budget: the one
     * {@link RetryBudget#shared(String) RetryBudget.shared(name)} returns, shared by every retry
     * of that name in the process (ratio 0.1, 100 tokens, a floor of 10 retries per second).
     * {@link #withBudget} replaces it, {@link #withoutBudget()} removes it; {@link #withClock}
     * with another clock than the system's gives the retry its own default budget on that clock
     * (shared by the copies made from it).
     */
    public static Retry of(String name, RetryPolicy policy) {
        Checks.notNull("name", name);
        return new Retry(name, Checks.notNull("policy", policy), null, RetryBudget.shared(name), true, null, null,
                NO_LISTENERS, Clock.system(), RandomSource.threadLocal(), null, Nesting.DEFER, null);
    }

    /** Guards every attempt with {@code breaker}; once it opens, retrying stops (reason CIRCUIT_OPEN). */
    public Retry withCircuitBreaker(CircuitBreaker breaker) {
        return new Retry(name, policy, Checks.notNull("breaker", breaker), budget, defaultBudget, throttle, bulkhead, listeners,
                clock, random, fallback, nesting, hedging);
    }

    /** Asks {@code budget} before every retry (never before a first attempt), instead of the default budget. */
    public Retry withBudget(RetryBudget budget) {
        return new Retry(name, policy, breaker, Checks.notNull("budget", budget), false, throttle, bulkhead, listeners, clock,
                random, fallback, nesting, hedging);
    }

    /**
     * No budget at all: every retry the policy allows is taken, however many calls fail at once.
     * Opting out of the default budget is explicit because retries without one multiply load
     * during an outage and can keep a recovering downstream down (see the module README).
     */
    public Retry withoutBudget() {
        return new Retry(name, policy, breaker, null, false, throttle, bulkhead, listeners, clock, random, fallback, nesting, hedging);
    }

    /**
     * What this retry does inside or around another Stagger retry; {@link Nesting#DEFER} unless
     * set: a failure an inner retry decided on is not retried again here.
     */
    public Retry withNesting(Nesting nesting) {
        return new Retry(name, policy, breaker, budget, defaultBudget, throttle, bulkhead, listeners, clock, random, fallback,
                Checks.notNull("nesting", nesting), hedging);
    }

    /**
     * Asks {@code throttle} before every attempt, first attempts included, and tells it which
     * attempts the backend accepted; a local refusal ends the call (reason THROTTLED).
     */
    public Retry withThrottle(AdaptiveThrottle throttle) {
        return new Retry(name, policy, breaker, budget, defaultBudget, Checks.notNull("throttle", throttle), bulkhead, listeners,
                clock, random, fallback, nesting, hedging);
    }

    /**
     * Takes a permit of {@code bulkhead} for every attempt, first attempts included, and gives it
     * back as the attempt ends (none is held during a wait between attempts); a full bulkhead ends
     * the call (reason BULKHEAD_FULL). Not with a policy that hedges.
     */
    public Retry withBulkhead(Bulkhead bulkhead) {
        return new Retry(name, policy, breaker, budget, defaultBudget, throttle, Checks.notNull("bulkhead", bulkhead),
                listeners, clock, random, fallback, nesting, hedging);
    }

    /** Adds a listener; listeners are called in the order added. */
    public Retry withListener(RetryListener listener) {
        Checks.notNull("listener", listener);
        RetryListener[] more = java.util.Arrays.copyOf(listeners, listeners.length + 1);
        more[listeners.length] = listener;
        return new Retry(name, policy, breaker, budget, defaultBudget, throttle, bulkhead, more, clock, random, fallback, nesting, hedging);
    }

    /**
     * Answers calls that end without success with {@code fallback} (a cached value, a deferred
     * answer, a message for the user) instead of their failure; see {@link Fallback}. Replaces any
     * fallback set before; chain several with {@link Fallback#orElse}. The fallback's value is
     * returned as the call's result, unchecked: use the returned {@code Retry} for calls of the
     * fallback's type.
     */
    public Retry withFallback(Fallback<?> fallback) {
        return new Retry(name, policy, breaker, budget, defaultBudget, throttle, bulkhead, listeners, clock, random,
                Checks.notNull("fallback", fallback), nesting, hedging);
    }

    /**
     * Time and waiting; {@link dev.stagger.testing.VirtualClock} in tests. A retry with the default
     * budget gets the default budget on that clock: the shared one of its name on the system
     * clock, else a new one on {@code clock}.
     */
    public Retry withClock(Clock clock) {
        Checks.notNull("clock", clock);
        RetryBudget b = !defaultBudget || clock == this.clock ? budget
                : clock == Clock.system() ? RetryBudget.shared(name) : RetryBudget.builder(name).clock(clock).build();
        return new Retry(name, policy, breaker, b, defaultBudget, throttle, bulkhead, listeners, clock, random, fallback, nesting,
                clock == this.clock ? hedging : null); // the latencies' windows run on the clock
    }

    /**
     * This retry running {@code policy} instead, with the same breaker, budget, throttle,
     * listeners, fallback, clock and nesting. When {@code policy} hedges with the same
     * {@link HedgePolicy} instance as this retry's, the copy shares this retry's recent latencies
     * (the percentile delay's histogram): an integration that adds a classifier per call keeps one
     * warmed-up delay for all its calls.
     */
    public Retry withPolicy(RetryPolicy policy) {
        Checks.notNull("policy", policy);
        Hedging kept = hedging != null && policy.hedge().orElse(null) == hedging.policy ? hedging : null;
        return new Retry(name, policy, breaker, budget, defaultBudget, throttle, bulkhead, listeners, clock, random, fallback,
                nesting, kept);
    }

    /** Randomness for jitter; a seeded source makes schedules reproducible. */
    public Retry withRandom(RandomSource random) {
        return new Retry(name, policy, breaker, budget, defaultBudget, throttle, bulkhead, listeners, clock,
                Checks.notNull("random", random), fallback, nesting, hedging);
    }

    public String name() {
        return name;
    }

    public RetryPolicy policy() {
        return policy;
    }

    /** The breaker asked before every attempt, if any. */
    public java.util.Optional<CircuitBreaker> circuitBreaker() {
        return java.util.Optional.ofNullable(breaker);
    }

    /** The budget asked before every retry: the default one unless replaced; empty after {@link #withoutBudget()}. */
    public java.util.Optional<RetryBudget> budget() {
        return java.util.Optional.ofNullable(budget);
    }

    /** What this retry does inside or around another; see {@link Nesting}. */
    public Nesting nesting() {
        return nesting;
    }

    /** The adaptive throttle asked before every attempt, if any. */
    public java.util.Optional<AdaptiveThrottle> throttle() {
        return java.util.Optional.ofNullable(throttle);
    }

    /** The bulkhead every attempt takes a permit of, if any. */
    public java.util.Optional<Bulkhead> bulkhead() {
        return java.util.Optional.ofNullable(bulkhead);
    }

    public Clock clock() {
        return clock;
    }

    /**
     * The delay a hedged call starting now waits before its first hedge: the policy's fixed delay,
     * or the percentile of this retry's recent latencies once warmed up (never below the floor);
     * empty when the policy does not hedge. For integrations that size their own timers by it.
     */
    public java.util.Optional<Duration> hedgeDelay() {
        return hedging == null ? java.util.Optional.empty() : java.util.Optional.of(Duration.ofNanos(hedging.delayNanos()));
    }

    /**
     * Hedges this retry's hedging refused itself since it was made (shared with the copies that
     * share its latencies): while most first attempts outlived the delay (the overload guard) or
     * while hedges kept losing (the credit); see {@link HedgePolicy}. Like a hedge the budget,
     * breaker or throttle refuses (counted by them), a refused hedge is not sent and the call goes
     * on. 0 when the policy does not hedge. A {@link java.util.concurrent.atomic.LongAdder} total:
     * exact when no call is running.
     */
    public long hedgesRefused() {
        return hedging == null ? 0 : hedging.refusals();
    }

    /** The fallback answering calls that end without success, if any. */
    public java.util.Optional<Fallback<?>> fallback() {
        return java.util.Optional.ofNullable(fallback);
    }

    public List<RetryListener> listeners() {
        return List.of(listeners);
    }

    /** Runs {@code operation} until it succeeds or the policy gives up. See the class comment. */
    public <T> T call(Callable<T> operation) throws Exception {
        long serial = Ambient.serial(); // a decision told after this was made by a retry inside this attempt
        if (frameless && !Ambient.framed(serial)) {
            BulkheadPermits.@Nullable Permit held = null;
            Bulkhead bulkhead = this.bulkhead;
            if (bulkhead != null && (held = bulkhead.permits.tryAcquire()) == null) {
                return new RetryExecution<T>(this, operation, null).runSync(); // waits for a permit or is refused there
            }
            AdaptiveThrottle throttle = this.throttle;
            if (throttle != null && !throttle.tryAcquire()) {
                if (held != null && bulkhead != null) { // a permit was held only with a bulkhead
                    bulkhead.permits.giveBack(held);
                }
                return new RetryExecution<T>(this, operation, null).since(serial).runSyncRefusedFirst(0);
            }
            T result;
            try {
                result = operation.call();
            } catch (Throwable first) {
                return new RetryExecution<T>(this, operation, null).since(serial).holding(held)
                        .runSyncAfterFirstFailure(first, 0);
            }
            if (held != null && bulkhead != null) { // a permit was held only with a bulkhead
                bulkhead.permits.release(held, false);
            }
            if (throttle != null) {
                // what the engine decides for any result when results are not classified
                throttle.record(result, null, Decision.accept());
            }
            RetryBudget budget = this.budget;
            if (budget != null) {
                budget.onSuccess();
            }
            return result;
        }
        if (hedging != null) {
            if (watchedHedge) {
                return HedgeWatch.call(this, Checks.notNull("operation", operation), serial);
            }
            return new HedgedExecution<T>(this, Checks.notNull("operation", operation), false, true).await();
        }
        if (!needsFrame && !Ambient.framed(serial)) {
            return new RetryExecution<T>(this, operation, null).runSync();
        }
        return callFramed(operation);
    }

    /** {@link #call(Callable)} keeping a frame on the thread's {@link Ambient} stack while it runs. */
    private <T> T callFramed(Callable<T> operation) throws Exception {
        if (policy.deadlineNanos() > 0) {
            Ambient.needFrames(); // retries inside this one are bounded by its deadline
        }
        Ambient.Local local = Ambient.local();
        Ambient.Frame frame = local.enter(this);
        try {
            if (fastPath) {
                long serial = Ambient.serial();
                // With a deadline, the start comes from the coarse clock: a volatile read, no OS call.
                long start = 0;
                if (policy.deadlineNanos() > 0) {
                    start = clock.coarseNanoTime();
                    frame.limit(start + policy.deadlineNanos());
                }
                BulkheadPermits.@Nullable Permit held = null;
                Bulkhead bulkhead = this.bulkhead;
                if (bulkhead != null && (held = bulkhead.permits.tryAcquire()) == null) {
                    return new RetryExecution<T>(this, operation, null).nest(frame).runSync();
                }
                AdaptiveThrottle throttle = this.throttle;
                if (throttle != null && !throttle.tryAcquire()) {
                    if (held != null && bulkhead != null) { // a permit was held only with a bulkhead
                        bulkhead.permits.giveBack(held);
                    }
                    return new RetryExecution<T>(this, operation, null).nest(frame).since(serial).runSyncRefusedFirst(start);
                }
                T result;
                try {
                    result = operation.call();
                } catch (Throwable first) {
                    return new RetryExecution<T>(this, operation, null).nest(frame).since(serial).holding(held)
                            .runSyncAfterFirstFailure(first, start);
                }
                if (held != null && bulkhead != null) { // a permit was held only with a bulkhead
                    bulkhead.permits.release(held, false);
                }
                if (throttle != null) {
                    throttle.record(result, null, Decision.accept());
                }
                if (budget != null) {
                    budget.onSuccess();
                }
                return result;
            }
            return new RetryExecution<T>(this, operation, null).nest(frame).runSync();
        } finally {
            local.exit();
        }
    }

    /** As {@link #call(Callable)}, giving the operation its {@link AttemptContext}. */
    public <T> T call(AttemptCallable<T> operation) throws Exception {
        if (hedging != null) {
            return new HedgedExecution<T>(this, Checks.notNull("operation", operation), true, true).await();
        }
        if (!needsFrame && !Ambient.framed()) {
            return new RetryExecution<T>(this, null, operation).runSync();
        }
        if (policy.deadlineNanos() > 0) {
            Ambient.needFrames();
        }
        Ambient.Local local = Ambient.local();
        Ambient.Frame frame = local.enter(this);
        try {
            return new RetryExecution<T>(this, null, operation).nest(frame).runSync();
        } finally {
            local.exit();
        }
    }

    /** As {@link #call(Callable)} for operations that throw only unchecked exceptions. */
    public <T> T get(Supplier<T> operation) {
        try {
            return call(operation::get);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Exception checked) {
            throw new IllegalStateException(checked); // unreachable: a Supplier throws no checked exception
        }
    }

    /** As {@link #call(Callable)} for a {@link Runnable}. */
    public void run(Runnable operation) {
        get(() -> {
            operation.run();
            return null;
        });
    }

    /** Runs an asynchronous operation with retries. See the class comment. */
    public <T> CompletableFuture<T> callAsync(Supplier<? extends CompletionStage<T>> operation) {
        if (hedging != null) {
            long serial = Ambient.serial();
            if (lightHedge && !Ambient.framed(serial)) {
                return PendingHedge.start(this, Checks.notNull("operation", operation), serial);
            }
            return new HedgedExecution<T>(this, Checks.notNull("operation", operation), false, false).start();
        }
        return new AsyncRetryExecution<>(this, Checks.notNull("operation", operation), null).start();
    }

    /**
     * As {@link #callAsync(Supplier)}, giving each attempt its {@link AttemptContext}: the attempt
     * number, the time left before the deadline and the attempt's timeout, read from the engine
     * rather than computed by the caller. The context is valid while the attempt runs.
     */
    public <T> CompletableFuture<T> callAsync(Function<? super AttemptContext, ? extends CompletionStage<T>> operation) {
        if (hedging != null) {
            return new HedgedExecution<T>(this, Checks.notNull("operation", operation), true, false).start();
        }
        return new AsyncRetryExecution<T>(this, null, Checks.notNull("operation", operation)).start();
    }

    @Override
    public String toString() {
        return "Retry{" + name + ", " + policy + (breaker != null ? ", " + breaker : "")
                + (budget != null ? ", " + budget : "") + (throttle != null ? ", " + throttle : "")
                + (bulkhead != null ? ", " + bulkhead : "")
                + (fallback != null ? ", " + fallback : "") + "}";
    }

    @SuppressWarnings("unchecked")
    static <E extends Throwable> E sneaky(Throwable t) throws E {
        throw (E) t;
    }
}
