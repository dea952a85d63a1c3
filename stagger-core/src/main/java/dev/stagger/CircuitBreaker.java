package dev.stagger;

import static dev.stagger.BreakerWord.MAX_CONSECUTIVE;
import static dev.stagger.BreakerWord.MAX_HALF_OPEN_PERMITS;

import dev.stagger.internal.Checks;
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
 * <p>The mechanics sit in package-private classes beside this one: the current phase, its
 * transitions and the publication of a trip in {@code BreakerPhases}; the words' bit layout in {@code BreakerWord}; the
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

    /** The permit of a refused call. */
    static final Permit REFUSED = new Permit() {
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
    private final long slowCallNanos;
    private final FailurePredicate isFailure;
    private final Clock clock;
    /** The current phase and its transitions. */
    private final BreakerPhases phases;

    private CircuitBreaker(Builder b) {
        this.name = b.name;
        this.slowCallNanos = b.slowCallThreshold == null ? 0 : Checks.nanos(b.slowCallThreshold);
        this.isFailure = b.isFailure;
        this.clock = b.clock;
        this.phases = new BreakerPhases(b, Checks.nanos(b.window), Checks.nanos(b.openDuration));
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
        return phases.state();
    }

    /**
     * Registers a transition listener on this running breaker (for metrics binders and logs). It
     * receives every transition made after this method returns (and may receive one made while it
     * ran), synchronously on the thread that made it. Thread-safe; a listener that throws is
     * ignored.
     */
    public Subscription subscribe(Listener listener) {
        return phases.listeners.add(Checks.notNull("listener", listener));
    }

    /**
     * Asks to make a call.
     *
     * @return a permit: {@link Permit#isGranted()} is false when the breaker refuses the call; a
     *     granted permit must be finished once, by {@code record} or {@link #releasePermission(Permit)}
     */
    public Permit tryAcquirePermission() {
        Phase p = phases.phase;
        if (p instanceof ClosedPhase c && c.deciding == 0) {
            return c; // the common case, small enough to be inlined; see BreakerPhases.acquire()
        }
        return phases.acquire();
    }

    /**
     * Gives back a permit whose call was abandoned before it had an outcome (an async attempt
     * cancelled in flight), so that a half-open breaker is not left waiting for a probe that will
     * never report. A probe permit returns only to the half-open period that issued it; any other
     * permit, and a refused one, is simply finished.
     */
    public void releasePermission(Permit permit) {
        phases.release(Checks.notNull("permit", permit));
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
        phases.apply(permit, failed || slow, slow);
    }

    private boolean ignores(Throwable failure) {
        try {
            return isFailure.isIgnored(failure);
        } catch (RuntimeException predicateFailed) {
            return false; // judged by isFailure instead, which decides what an unjudged outcome is
        }
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
        phases.reset();
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
        phases.forceOpen();
    }

    /** One reading of the state and the window; see the class's concurrency notes. */
    public Metrics metrics() {
        return phases.metrics();
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
        return new CircuitOpenException(name, Duration.ofNanos(phases.openWaitNanos()), cause, lastResult);
    }

    /** True when slow calls are counted, so callers must measure each call's duration. */
    boolean measuresDuration() {
        return slowCallNanos > 0;
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
        final String name;
        double failureRateThreshold = 0.5;
        boolean rateSet;
        boolean cellsFromStart;
        int minimumCalls = 20;
        int consecutiveFailures;
        Duration window = Duration.ofSeconds(30);
        int buckets = 10;
        Duration openDuration = Duration.ofSeconds(30);
        @Nullable Backoff openBackoff;
        int halfOpenPermits = 1;
        @Nullable Duration slowCallThreshold;
        FailurePredicate isFailure = (result, failure) -> failure != null;
        Clock clock = Clock.system();
        RandomSource random = RandomSource.threadLocal();

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
