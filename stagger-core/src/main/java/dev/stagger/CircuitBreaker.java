package dev.stagger;

import static dev.stagger.BreakerWord.MAX_CONSECUTIVE;
import static dev.stagger.BreakerWord.MAX_HALF_OPEN_PERMITS;
import static dev.stagger.BreakerWord.SEALED;
import static dev.stagger.BreakerWord.TRIPPED;

import dev.stagger.internal.Checks;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.Callable;
import java.util.concurrent.atomic.LongAdder;
import org.jspecify.annotations.Nullable;

/**
 * Stops calling a downstream that is failing, so that it can recover and callers fail fast.
 *
 * <p><b>CLOSED</b>: calls pass and outcomes are recorded. After every recorded outcome the breaker
 * trips to OPEN when, within the sliding {@code window} (default 30 s, in 10 buckets), at least
 * {@code minimumCalls} (default 20) were recorded and {@code failures / calls} is at least
 * {@code failureRateThreshold} (default 0.5, compared exactly as the decimal it is written as: 7
 * failures in 100 calls reach 0.07) — or, the simple mode, after {@code consecutiveFailures}
 * failures in a row. Setting only {@code consecutiveFailures} selects the simple mode alone.
 *
 * <p><b>OPEN</b>: every call is refused at once with a {@link CircuitOpenException} that says when
 * the next probe is allowed, for {@code openDuration} (default 30 s) from the moment the trip
 * takes effect (see the concurrency notes). Outcomes recorded while open change nothing. With
 * {@link Builder#openBackoff(Backoff)} the duration grows on each re-open in a row, from one
 * schedule kept across those re-opens and reset once the breaker closes.
 *
 * <p><b>HALF_OPEN</b>: the first call after the open period moves the breaker here; it admits
 * {@code halfOpenPermits} (default 1) probes. When all of them succeed the breaker closes with
 * fresh counts; any failure recorded while half-open re-opens it. Only the probes of this period
 * count towards closing: the success of a call admitted earlier (while closed) is not evidence of
 * recovery.
 *
 * <p><b>Permits.</b> {@link #tryAcquirePermission()} returns a {@link Permit} that identifies the
 * period that issued it. Every granted permit must be finished exactly once: by
 * {@link #record(Permit, Object, Throwable)} with the call's outcome, or by
 * {@link #releasePermission(Permit)} when the call was abandoned without one. A released probe
 * permit returns only to the half-open period that issued it.
 *
 * <p><b>What counts as a failure</b> is a {@link FailurePredicate} ({@link Builder#failurePredicate}:
 * a 404 is not the downstream being sick), which may also ignore a failure: the call then counts as
 * neither a success nor a failure ({@link FailurePredicate#isIgnored}). A predicate that throws does not break the caller: the
 * outcome counts as a failure, and the predicate's exception is added as suppressed to the
 * operation's exception when there is one. Slow calls can count as failures too.
 *
 * <p><b>Concurrency.</b> Thread-safe and lock-free (with {@link Builder#openBackoff} one wait,
 * described below); permission checks allocate nothing, and
 * recording allocates only when the window moves and, once per bucket, when two threads first
 * contend on it. {@link #tryAcquirePermission()}, {@link #releasePermission(Permit)}, {@code record},
 * {@link #state()}, {@link #reset()} and {@link #forceOpen()} are linearizable against the behaviour above (each takes
 * effect atomically at one instant between its call and its return, with the clock read at that
 * instant): the closed state's failures and calls of the current bucket, the consecutive count and
 * the trip decision are one 64-bit word changed by compare-and-set, and earlier buckets are sealed
 * and summed when the window moves, so every decision is made from one consistent reading of the
 * window and no outcome is lost or counted twice. Under contention, a success that the word alone
 * shows cannot trip the breaker (the rate stays below the threshold however many calls the
 * reading is missing) is counted instead in a per-thread cell beside the word, so that healthy
 * calls on several threads do not contend; a decision close to the threshold, the window moving
 * and {@link #metrics()} first freeze those cells and read them exactly. A decision to trip is
 * made visible by the compare-and-set of the word and takes effect, its open period starting
 * there, at a clock reading made after that: the deciding thread reads the clock and publishes the
 * OPEN state next, and any thread that meets the trip before the publication does the same before
 * it acts (the first publication stands). No operation therefore acts on a breaker tripped but not
 * yet open, and the open period never starts before an operation that saw the breaker still
 * closed. In rate mode, when that reading falls in a later bucket period than the one the
 * decision read, the deciding outcome is counted in the later period and the decision is made
 * again on the window there. With {@link Builder#openBackoff} the period's length is drawn from
 * the schedule once, by the deciding thread: a thread that meets its trip before the publication
 * waits for it, which is the next instructions of the deciding thread.
 * {@link #metrics()} is one reading of the state and the window counts ({@code state},
 * {@code calls}, {@code failures}, {@code failureRate}, {@code consecutiveFailures} are linearizable);
 * {@code slowCalls}, {@code rejected} and {@code transitions} are {@link LongAdder} totals, exact
 * when the breaker is quiescent and otherwise missing at most the updates in flight. Listeners are
 * told of a transition after it has happened, on the thread that made it; two transitions made
 * on different threads may reach a listener in either order.
 *
 * <p>The closed path reads the clock's millisecond ticker ({@link Clock#coarseNanoTime()}) only
 * in rate mode, and the precise clock only to start the open period of a trip. Limits that keep the word
 * exact: a bucket holds up to 2<sup>24</sup>-1 calls (a busier bucket continues in a new one of
 * the same period), {@code consecutiveFailures} is at most 8191.
 *
 * <p>The mechanics sit in package-private classes beside this one, which keeps the phases'
 * transitions and the publication of a trip: the words' bit layout in {@code BreakerWord}; the
 * closed phase's buckets and their per-thread cells in {@code ClosedPhase} and
 * {@code WindowBucket}; counting outcomes into them, moving the window and deciding a trip in
 * {@code SlidingWindow}; the half-open word in {@code HalfOpenPhase}.
 */
public final class CircuitBreaker {

    /** The breaker's states. */
    public enum State { CLOSED, OPEN, HALF_OPEN }

    /**
     * A change of state.
     *
     * @param at the clock's wall time ({@link Clock#currentTimeMillis()}) when the change was made
     */
    public record Transition(String circuitBreakerName, State from, State to, Instant at) {
    }

    /** Receives transitions, synchronously, on the thread that caused them. Must not throw. */
    @FunctionalInterface
    public interface Listener {
        void onTransition(Transition transition);
    }

    /** A listener's registration; {@link #cancel()} stops further transitions from reaching it. */
    @FunctionalInterface
    public interface Subscription {
        void cancel();
    }

    /**
     * Which outcomes are failures of the downstream. Exactly one of {@code result} and
     * {@code failure} is meaningful: {@code failure} is null when the call returned {@code result}
     * (which may itself be null).
     */
    @FunctionalInterface
    public interface FailurePredicate {
        boolean isFailure(@Nullable Object result, @Nullable Throwable failure);

        /**
         * Whether {@code failure} is no evidence either way, so the breaker records the call as
         * neither a success nor a failure (a validation error the caller made, a cancellation):
         * the call's permit is finished as by {@link CircuitBreaker#releasePermission(Permit)},
         * so a half-open probe that ends this way leaves its place to another probe. Asked before
         * {@link #isFailure}; only for calls that threw. Default: nothing is ignored. A predicate
         * that throws here ignores nothing, and {@link #isFailure} judges the outcome.
         */
        default boolean isIgnored(Throwable failure) {
            return false;
        }
    }

    /**
     * The answer to {@link #tryAcquirePermission()}: granted or not, and — when granted — the
     * period that issued it, which {@link #record(Permit, Object, Throwable)} and
     * {@link #releasePermission(Permit)} use. Opaque; never allocated per call.
     */
    public abstract static class Permit {
        private Permit() {
        }

        /** True when the call may proceed. */
        public abstract boolean isGranted();
    }

    /**
     * Counts at one moment. {@code state}, {@code calls}, {@code failures}, {@code failureRate}
     * and {@code consecutiveFailures} come from one reading; the others are running totals.
     *
     * @param calls successes + failures in the current window (zero unless closed)
     * @param failureRate failures / calls in the window, 0 when there were none
     * @param slowCalls slow calls in the window (a total, see the class's concurrency notes)
     * @param rejected calls refused since creation (a total)
     * @param transitions state changes since creation (a total)
     */
    public record Metrics(State state, long calls, long failures, long slowCalls, double failureRate,
                          int consecutiveFailures, long rejected, long transitions) {
    }

    private static final VarHandle PHASE;

    static {
        try {
            PHASE = MethodHandles.lookup().findVarHandle(CircuitBreaker.class, "phase", Phase.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private static final Permit REFUSED = new Permit() {
        @Override
        public boolean isGranted() {
            return false;
        }

        @Override
        public String toString() {
            return "Permit{refused}";
        }
    };

    private final String name;
    /** The closed state's counting and trip decision. */
    private final SlidingWindow window;
    private final long openNanos;
    private final Backoff openBackoff;
    private final int halfOpenPermits;
    private final long slowCallNanos;
    private final FailurePredicate isFailure;
    private final Clock clock;
    private final RandomSource random;
    private final TransitionListeners listeners = new TransitionListeners();

    /** Read directly, changed only through {@link #PHASE}. */
    private volatile Phase phase;
    private final LongAdder rejected = new LongAdder();

    private CircuitBreaker(Builder b) {
        this.name = b.name;
        this.window = new SlidingWindow(this, !b.rateModeDisabled(), b.failureRateThreshold, b.minimumCalls,
                b.consecutiveFailures, Checks.nanos(b.window), b.buckets, b.clock, b.cellsFromStart);
        this.openNanos = Checks.nanos(b.openDuration);
        this.openBackoff = b.openBackoff;
        this.halfOpenPermits = b.halfOpenPermits;
        this.slowCallNanos = b.slowCallThreshold == null ? 0 : Checks.nanos(b.slowCallThreshold);
        this.isFailure = b.isFailure;
        this.clock = b.clock;
        this.random = b.random;
        this.phase = window.newClosed();
    }

    public static Builder builder(String name) {
        return new Builder(name);
    }

    /** A breaker with every default. */
    public static CircuitBreaker of(String name) {
        return builder(name).build();
    }

    public String name() {
        return name;
    }

    /**
     * The state the next call would see: an open breaker whose open period is over reports
     * HALF_OPEN (it moves there with that call).
     */
    public State state() {
        while (true) {
            Phase p = phase;
            if (p.tripping()) {
                completeTrip(p, false);
                continue;
            }
            State s = stateOf(p);
            if (!(p instanceof OpenPhase) || phase == p) {
                return s; // an open phase is judged by a later clock reading: it must still be current then
            }
        }
    }

    /** What {@code p}, not {@link Phase#tripping}, means now: a sealed word already decides it. */
    private State stateOf(Phase p) {
        if (p instanceof ClosedPhase) {
            return State.CLOSED;
        }
        if (p instanceof HalfOpenPhase h) {
            return h.closing() ? State.CLOSED : State.HALF_OPEN;
        }
        OpenPhase open = (OpenPhase) p;
        return !open.forced && clock.nanoTime() >= open.untilNanos ? State.HALF_OPEN : State.OPEN;
    }

    /**
     * Registers a transition listener on this running breaker (for metrics binders and logs). It
     * receives every transition made after this method returns (and may receive one made while it
     * ran), synchronously on the thread that made it. Thread-safe; a listener that throws is
     * ignored.
     */
    public Subscription subscribe(Listener listener) {
        return listeners.add(Checks.notNull("listener", listener));
    }

    /**
     * Asks to make a call.
     *
     * @return a permit: {@link Permit#isGranted()} is false when the breaker refuses the call; a
     *     granted permit must be finished once, by {@code record} or {@link #releasePermission(Permit)}
     */
    public Permit tryAcquirePermission() {
        Phase p = phase;
        if (p instanceof ClosedPhase c && c.deciding == 0) {
            return c; // the common case, small enough to be inlined; see acquire()
        }
        return acquire();
    }

    private Permit acquire() {
        while (true) {
            Phase p = phase;
            if (p instanceof ClosedPhase c) {
                // deciding == 0: no trip decided or being decided, so the word is not TRIPPED now
                if (c.deciding == 0 || window.admits(c)) {
                    return c;
                }
            } else if (p instanceof OpenPhase open) {
                if (open.forced || clock.nanoTime() < open.untilNanos) {
                    rejected.increment();
                    return REFUSED;
                }
                // The mover's own permit is taken before the phase is published: once it is, other
                // threads may take the rest.
                HalfOpenPhase half = new HalfOpenPhase(halfOpenPermits - 1, open.opens, open.schedule);
                if (PHASE.compareAndSet(this, p, half)) {
                    emit(State.OPEN, State.HALF_OPEN);
                    return half;
                }
            } else {
                HalfOpenPhase half = (HalfOpenPhase) p;
                int took = half.tryTakeProbe(this);
                if (took == HalfOpenPhase.TAKEN) {
                    return half;
                }
                if (took == HalfOpenPhase.NONE_LEFT) {
                    rejected.increment();
                    return REFUSED;
                }
            }
        }
    }

    /**
     * Gives back a permit whose call was abandoned before it had an outcome (an async attempt
     * cancelled in flight), so that a half-open breaker is not left waiting for a probe that will
     * never report. A probe permit returns only to the half-open period that issued it; any other
     * permit, and a refused one, is simply finished.
     */
    public void releasePermission(Permit permit) {
        Checks.notNull("permit", permit);
        if (permit instanceof HalfOpenPhase half) {
            half.release(halfOpenPermits);
        }
    }

    /**
     * Records a permitted call's outcome.
     *
     * @param permit what {@link #tryAcquirePermission()} returned for this call; a refused permit
     *     records nothing
     * @param result the call's result, when it returned (may be null)
     * @param failure what it threw, or null
     */
    public void record(Permit permit, @Nullable Object result, @Nullable Throwable failure) {
        record(permit, result, failure, -1);
    }

    /**
     * Records a permitted call's outcome and how long it took, for {@link Builder#slowCallThreshold}.
     *
     * @see #record(Permit, Object, Throwable)
     */
    public void record(Permit permit, @Nullable Object result, @Nullable Throwable failure, Duration duration) {
        record(permit, result, failure, Checks.nanos(Checks.notNull("duration", duration)));
    }

    /** The engine's form: {@code durationNanos} negative when not measured. */
    void record(Permit permit, @Nullable Object result, @Nullable Throwable failure, long durationNanos) {
        Checks.notNull("permit", permit);
        if (!permit.isGranted()) {
            return;
        }
        if (failure != null && ignores(failure)) {
            releasePermission(permit); // neither a success nor a failure: as if the call had not been made
            return;
        }
        boolean failed;
        try {
            failed = isFailure.isFailure(result, failure);
        } catch (RuntimeException predicateFailed) {
            failed = true; // an outcome the breaker cannot judge is not evidence of health
            if (failure != null && failure != predicateFailed) {
                failure.addSuppressed(predicateFailed);
            }
        }
        boolean slow = slowCallNanos > 0 && durationNanos >= slowCallNanos;
        apply(permit, failed || slow, slow);
    }

    private boolean ignores(Throwable failure) {
        try {
            return isFailure.isIgnored(failure);
        } catch (RuntimeException predicateFailed) {
            return false; // judged by isFailure instead, which decides what an unjudged outcome is
        }
    }

    private void apply(Permit permit, boolean failure, boolean slow) {
        while (true) {
            Phase p = phase;
            if (p instanceof ClosedPhase c) {
                if (window.record(c, failure, slow)) {
                    return;
                }
            } else if (p instanceof HalfOpenPhase half) {
                if (half.record(this, permit, failure, halfOpenPermits)) {
                    return;
                }
            } else {
                return; // open: the breaker already refuses; the outcome changes nothing
            }
        }
    }

    /**
     * Makes the trip that {@code p}'s word shows take effect: reads the clock, now that the trip is
     * visible, and publishes the OPEN phase whose period starts at that reading. The deciding
     * thread does this next; any other thread that meets the trip first does it too, before it
     * acts on the breaker (the first publication stands), so no thread acts on a trip whose open
     * period is not fixed, and the trip takes effect at the clock reading of the publication that
     * stands, a reading made after every operation that saw the breaker before it. With
     * {@link Builder#openBackoff} the period's length is drawn from the schedule, once, by the
     * deciding thread alone: another thread waits for it instead (returns at once, to read the
     * phase again).
     *
     * <p>In rate mode the reading may fall in a later bucket period than the one the decision read
     * the window in: the deciding outcome then belongs to that later period, and the decision is
     * made again on the window there ({@code SlidingWindow.reconsider}).
     *
     * @param decider true on the thread whose compare-and-set made the trip visible
     */
    void completeTrip(Phase p, boolean decider) {
        if (openBackoff != null && !decider) {
            Thread.onSpinWait(); // the deciding thread publishes in its next instructions
            return;
        }
        long at = clock.nanoTime();
        if (p instanceof HalfOpenPhase half) {
            publishOpen(half, State.HALF_OPEN, at, half.opens + 1, half.schedule);
            return;
        }
        ClosedPhase c = (ClosedPhase) p;
        ClosedPhase continued = window.reconsider(c, at);
        if (continued != null) {
            PHASE.compareAndSet(this, c, continued); // the first publication stands, as for OPEN
            return;
        }
        publishOpen(c, State.CLOSED, at, 1, openBackoff == null ? null : openBackoff.start(random));
    }

    /** Publishes the open period of a trip that takes effect at {@code startedAt}; see {@link #completeTrip}. */
    private void publishOpen(Phase from, State fromState, long startedAt, int opens, Backoff.@Nullable Schedule schedule) {
        long duration = schedule == null ? openNanos : Math.max(openNanos, schedule.nextDelayNanos(opens));
        if (PHASE.compareAndSet(this, from, OpenPhase.startingAt(startedAt, duration, opens, schedule))) {
            emit(fromState, State.OPEN);
        } // else another thread published this trip first, or a reset or forced open replaced the phase, and stands
    }

    /** Whether {@code p} is the current phase. */
    boolean isPhase(Phase p) {
        return phase == p;
    }

    /** Runs {@code operation} if the breaker allows it, recording the outcome. */
    public <T> T call(Callable<T> operation) throws Exception {
        Permit permit = tryAcquirePermission();
        if (!permit.isGranted()) {
            throw openException(null, null);
        }
        long start = slowCallNanos > 0 ? clock.nanoTime() : 0;
        T result;
        try {
            result = operation.call();
        } catch (Throwable t) {
            record(permit, null, t, slowCallNanos > 0 ? clock.nanoTime() - start : -1);
            throw t;
        }
        record(permit, result, null, slowCallNanos > 0 ? clock.nanoTime() - start : -1);
        return result;
    }

    /** Forces the breaker closed with fresh counts (an operator's action). */
    public void reset() {
        while (true) {
            Phase p = phase;
            if (p instanceof ClosedPhase c ? window.reset(c) : p instanceof HalfOpenPhase half ? half.reset(this)
                    : PHASE.compareAndSet(this, p, window.newClosed())) {
                if (p instanceof OpenPhase) {
                    emit(State.OPEN, State.CLOSED);
                }
                return;
            }
        }
    }

    /**
     * Forces the breaker open and holds it there, without probes, until {@link #reset()} (an
     * operator's action: a downstream under maintenance, or known to be failing before the window
     * shows it). Every call is refused with a {@link CircuitOpenException} whose
     * {@link CircuitOpenException#retryIn()} is {@code openDuration}, a hint only: the breaker
     * stays open until reset. A transition to OPEN is reported unless the breaker was already
     * open; outcomes of calls admitted before are ignored, as they are while open. A trip being
     * decided at the same moment loses to this call (as it does to {@link #reset()}).
     * Linearizable; idempotent.
     */
    public void forceOpen() {
        while (true) {
            Phase p = phase;
            if (p instanceof OpenPhase open && open.forced) {
                return;
            }
            // the phase's own state: a trip or a close being decided on it will not be published now
            State from = p instanceof ClosedPhase ? State.CLOSED
                    : p instanceof HalfOpenPhase ? State.HALF_OPEN : State.OPEN;
            int opens = p instanceof StreakPhase streak ? streak.opens : 0;
            if (PHASE.compareAndSet(this, p, new OpenPhase(Long.MAX_VALUE, opens, null, true))) {
                if (from != State.OPEN) {
                    emit(from, State.OPEN);
                }
                return;
            }
        }
    }

    /**
     * Replaces a sealed phase (reset, closing, or tripped and being reset) with fresh closed
     * counts; any thread may do it, the one that succeeds reports the transition.
     */
    boolean replaceSealed(Phase sealed, State from) {
        if (!PHASE.compareAndSet(this, sealed, window.newClosed())) {
            return false;
        }
        if (from != State.CLOSED) {
            emit(from, State.CLOSED);
        }
        return true;
    }

    /** One reading of the state and the window; see the class's concurrency notes. */
    public Metrics metrics() {
        while (true) {
            Phase p = phase;
            if (p.tripping()) {
                completeTrip(p, false);
                continue;
            }
            if (!(p instanceof ClosedPhase c)) {
                State s = stateOf(p);
                if (p instanceof OpenPhase && phase != p) {
                    continue;
                }
                return new Metrics(s, 0, 0, 0, 0, 0, rejected.sum(), listeners.count());
            }
            long[] counts = window.counts(c); // calls, failures, slow calls, consecutive failures
            if (counts == null) {
                continue;
            }
            long calls = counts[0];
            return new Metrics(State.CLOSED, calls, counts[1], counts[2], calls == 0 ? 0 : counts[1] / (double) calls,
                    (int) counts[3], rejected.sum(), listeners.count());
        }
    }

    /**
     * The exception {@link #call} throws for a call refused now: the breaker's name and how long
     * until the next probe is allowed. For integrations that ask {@link #tryAcquirePermission()}
     * themselves (a reactive pipeline) and must refuse a call as {@code call} does.
     */
    public CircuitOpenException refusal() {
        return openException(null, null);
    }

    /** The exception to throw for a refused call; {@code cause} and {@code lastResult} may be null. */
    CircuitOpenException openException(@Nullable Throwable cause, @Nullable Object lastResult) {
        Phase p = phase;
        while (p.tripping()) {
            completeTrip(p, false);
            p = phase;
        }
        long wait = 0;
        if (p instanceof OpenPhase open) {
            wait = open.forced ? openNanos : Math.max(0, open.untilNanos - clock.nanoTime());
        }
        return new CircuitOpenException(name, Duration.ofNanos(wait), cause, lastResult);
    }

    /** True when slow calls are counted, so callers must measure each call's duration. */
    boolean measuresDuration() {
        return slowCallNanos > 0;
    }

    private void emit(State from, State to) {
        listeners.emit(name, from, to, clock);
    }

    @Override
    public String toString() {
        return "CircuitBreaker{" + name + ", " + state() + "}";
    }

    // ---- phases: each one is also the permit it issues; the closed one is ClosedPhase ----

    /** The only subclass of {@link Permit} outside this file's, so that none can be made elsewhere. */
    abstract static class Phase extends Permit {
        Phase() {
        }

        /** Whether the phase's word says TRIPPED: a trip visible but not yet in effect (see {@code completeTrip}). */
        boolean tripping() {
            return false;
        }
    }

    /** Builds a {@link CircuitBreaker}. */
    public static final class Builder {
        private final String name;
        private double failureRateThreshold = 0.5;
        private boolean rateSet;
        private boolean cellsFromStart;
        private int minimumCalls = 20;
        private int consecutiveFailures;
        private Duration window = Duration.ofSeconds(30);
        private int buckets = 10;
        private Duration openDuration = Duration.ofSeconds(30);
        private Backoff openBackoff;
        private int halfOpenPermits = 1;
        private Duration slowCallThreshold;
        private FailurePredicate isFailure = (result, failure) -> failure != null;
        private Clock clock = Clock.system();
        private RandomSource random = RandomSource.threadLocal();

        private Builder(String name) {
            this.name = Checks.notNull("name", name);
        }

        /**
         * Failure share in (0, 1] at which the breaker opens, compared exactly as the decimal
         * written ({@code 0.07}: 7 failures in 100 calls open it). Default 0.5.
         */
        public Builder failureRateThreshold(double threshold) {
            if (!(threshold > 0 && threshold <= 1)) {
                throw new IllegalArgumentException("failureRateThreshold must be in (0, 1], got " + threshold);
            }
            this.failureRateThreshold = threshold;
            this.rateSet = true;
            return this;
        }

        /** Calls the window must hold before the rate can trip the breaker; at least 1. Default 20. */
        public Builder minimumCalls(int minimumCalls) {
            this.minimumCalls = Checks.atLeast("minimumCalls", minimumCalls, 1);
            return this;
        }

        /** Open after this many failures in a row, 1 to 8191; the simple mode. */
        public Builder consecutiveFailures(int consecutiveFailures) {
            Checks.atLeast("consecutiveFailures", consecutiveFailures, 1);
            this.consecutiveFailures = Checks.atMost("consecutiveFailures", consecutiveFailures, MAX_CONSECUTIVE);
            return this;
        }

        /** The sliding window of the failure rate. Default 30 s. */
        public Builder window(Duration window) {
            this.window = Checks.positive("window", window);
            return this;
        }

        /** Buckets the window is divided into; 1 to 1000. Default 10. */
        public Builder buckets(int buckets) {
            this.buckets = Checks.atMost("buckets", Checks.atLeast("buckets", buckets, 1), 1000);
            return this;
        }

        /** How long the breaker stays open before letting a probe through. Default 30 s. */
        public Builder openDuration(Duration openDuration) {
            this.openDuration = Checks.positive("openDuration", openDuration);
            return this;
        }

        /**
         * Grows the open duration on repeated re-opens: the k-th open in a row lasts
         * {@code max(openDuration, delay k of one schedule of backoff)}. The schedule is started
         * when the breaker opens from CLOSED and kept across the re-opens that follow, so a
         * stateful backoff ({@link Backoff#decorrelated}) grows as it does between a retry's
         * attempts; it starts afresh once the breaker closes.
         */
        public Builder openBackoff(Backoff backoff) {
            this.openBackoff = Checks.notNull("openBackoff", backoff);
            return this;
        }

        /** Probes admitted while half-open; all must succeed to close. 1 to 268435455. Default 1. */
        public Builder halfOpenPermits(int permits) {
            Checks.atLeast("halfOpenPermits", permits, 1);
            this.halfOpenPermits = Checks.atMost("halfOpenPermits", permits, MAX_HALF_OPEN_PERMITS);
            return this;
        }

        /** Calls at least this slow count as failures (and as slow calls in the metrics). */
        public Builder slowCallThreshold(Duration threshold) {
            this.slowCallThreshold = Checks.positive("slowCallThreshold", threshold);
            return this;
        }

        /**
         * Which outcomes are failures of the downstream. Default: every exception, no result.
         * HTTP: {@code StatusTable.failures()} counts exceptions and the statuses it retries.
         */
        public Builder failurePredicate(FailurePredicate isFailure) {
            this.isFailure = Checks.notNull("failurePredicate", isFailure);
            return this;
        }

        public Builder clock(Clock clock) {
            this.clock = Checks.notNull("clock", clock);
            return this;
        }

        /** Randomness for a jittered {@link #openBackoff(Backoff)}. */
        public Builder random(RandomSource random) {
            this.random = Checks.notNull("random", random);
            return this;
        }

        /** Tests only: successes count in cells from each bucket's start, as under contention. */
        Builder cellsFromStart() {
            this.cellsFromStart = true;
            return this;
        }

        boolean rateModeDisabled() {
            return consecutiveFailures > 0 && !rateSet;
        }

        public CircuitBreaker build() {
            return new CircuitBreaker(this);
        }
    }
}
