package dev.stagger;

import dev.stagger.internal.Checks;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.Callable;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicReferenceArray;
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
 * a 404 is not the downstream being sick). A predicate that throws does not break the caller: the
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

    // ---- the closed state's word: [SEALED][TRIPPED][RESET][consecutive 13][failures 24][calls 24] ----
    private static final int COUNT_BITS = 24;
    private static final long COUNT_MASK = (1L << COUNT_BITS) - 1;
    private static final int FAILURES_SHIFT = COUNT_BITS;
    private static final int CONSECUTIVE_SHIFT = 2 * COUNT_BITS;
    private static final long CONSECUTIVE_MASK = (1L << 13) - 1;
    static final int MAX_CONSECUTIVE = (int) CONSECUTIVE_MASK;
    private static final long SEALED = 1L << 63;
    private static final long TRIPPED = 1L << 62;
    private static final long RESET = 1L << 61;
    /** Half-open only: every probe succeeded. */
    private static final long CLOSING = 1L << 60;
    private static final long FLAGS = SEALED | TRIPPED | RESET | CLOSING;
    // ---- the half-open state's word: [flags 4][successes 28][permits left 32] ----
    private static final int SUCCESSES_SHIFT = 32;
    private static final long PERMITS_MASK = 0xFFFF_FFFFL;
    static final int MAX_HALF_OPEN_PERMITS = (1 << 28) - 1;
    // ---- a bucket's cells (see Bucket): STRIPES counters, CELL_PAD longs apart, a guard line each side ----
    /** A power of two, four or more per processor (so that threads by id rarely share one), at most 64. */
    private static final int STRIPES = Math.min(64,
            Integer.highestOneBit(Math.max(1, Runtime.getRuntime().availableProcessors()) * 8 - 1));
    private static final int CELL_PAD = 16;
    private static final long FROZEN_CELL = Long.MIN_VALUE;
    /** The cells of a bucket frozen before any were needed. */
    private static final long[] NO_CELLS = new long[0];

    private static final VarHandle PHASE;
    private static final VarHandle HEAD;
    private static final VarHandle WORD;
    private static final VarHandle HALF_WORD;
    private static final VarHandle DECIDING;
    private static final VarHandle CELLS;
    private static final VarHandle CELL = MethodHandles.arrayElementVarHandle(long[].class);

    static {
        try {
            MethodHandles.Lookup l = MethodHandles.lookup();
            PHASE = l.findVarHandle(CircuitBreaker.class, "phase", Phase.class);
            HEAD = l.findVarHandle(Closed.class, "head", Bucket.class);
            WORD = l.findVarHandle(Bucket.class, "word", long.class);
            HALF_WORD = l.findVarHandle(HalfOpen.class, "word", long.class);
            DECIDING = l.findVarHandle(Closed.class, "deciding", int.class);
            CELLS = l.findVarHandle(Bucket.class, "cells", long[].class);
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
    private final boolean rateMode;
    /** The threshold as the fraction thresholdNumerator / thresholdDenominator, in lowest terms. */
    private final long thresholdNumerator;
    private final long thresholdDenominator;
    /** Numerator and denominator below 2^31, so counts below 2^31 multiply without overflow. */
    private final boolean smallThreshold;
    private final int minimumCalls;
    private final int consecutiveFailuresToOpen;
    private final long bucketNanos;
    private final int bucketCount;
    private final long openNanos;
    private final Backoff openBackoff;
    private final int halfOpenPermits;
    private final long slowCallNanos;
    private final FailurePredicate isFailure;
    private final Clock clock;
    private final RandomSource random;
    /** Tests only: every bucket counts successes in cells from the start, as under contention. */
    private final boolean cellsFromStart;
    private final CopyOnWriteArrayList<Listener> listeners = new CopyOnWriteArrayList<>();

    /** Read directly, changed only through {@link #PHASE}. */
    private volatile Phase phase;
    private final LongAdder rejected = new LongAdder();
    private final LongAdder transitions = new LongAdder();

    private CircuitBreaker(Builder b) {
        this.name = b.name;
        this.rateMode = !b.rateModeDisabled();
        BigDecimal threshold = BigDecimal.valueOf(b.failureRateThreshold);
        BigInteger numerator = threshold.unscaledValue();
        BigInteger denominator = BigInteger.TEN.pow(Math.max(0, threshold.scale()));
        if (threshold.scale() < 0) {
            numerator = numerator.multiply(BigInteger.TEN.pow(-threshold.scale()));
        }
        BigInteger gcd = numerator.gcd(denominator);
        this.thresholdNumerator = numerator.divide(gcd).longValueExact();
        this.thresholdDenominator = denominator.divide(gcd).longValueExact();
        this.smallThreshold = thresholdNumerator < (1L << 31) && thresholdDenominator < (1L << 31);
        this.minimumCalls = b.minimumCalls;
        this.consecutiveFailuresToOpen = b.consecutiveFailures;
        this.bucketCount = b.buckets;
        this.bucketNanos = Math.max(1, Checks.nanos(b.window) / b.buckets);
        this.openNanos = Checks.nanos(b.openDuration);
        this.openBackoff = b.openBackoff;
        this.halfOpenPermits = b.halfOpenPermits;
        this.slowCallNanos = b.slowCallThreshold == null ? 0 : Checks.nanos(b.slowCallThreshold);
        this.isFailure = b.isFailure;
        this.clock = b.clock;
        this.random = b.random;
        this.cellsFromStart = b.cellsFromStart;
        this.phase = newClosed();
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
            if (tripping(p)) {
                completeTrip(p, false);
                continue;
            }
            State s = stateOf(p);
            if (!(p instanceof Open) || phase == p) {
                return s; // an open phase is judged by a later clock reading: it must still be current then
            }
        }
    }

    /** What {@code p}, not {@link #tripping}, means now: a sealed word already decides it. */
    private State stateOf(Phase p) {
        if (p instanceof Closed) {
            return State.CLOSED;
        }
        if (p instanceof HalfOpen h) {
            return (h.word & (CLOSING | RESET)) != 0 ? State.CLOSED : State.HALF_OPEN;
        }
        Open open = (Open) p;
        return !open.forced && clock.nanoTime() >= open.untilNanos ? State.HALF_OPEN : State.OPEN;
    }

    /**
     * Registers a transition listener on this running breaker (for metrics binders and logs). It
     * receives every transition made after this method returns (and may receive one made while it
     * ran), synchronously on the thread that made it. Thread-safe; a listener that throws is
     * ignored.
     */
    public Subscription subscribe(Listener listener) {
        Listener l = Checks.notNull("listener", listener);
        listeners.add(l);
        return () -> listeners.remove(l);
    }

    /**
     * Asks to make a call.
     *
     * @return a permit: {@link Permit#isGranted()} is false when the breaker refuses the call; a
     *     granted permit must be finished once, by {@code record} or {@link #releasePermission(Permit)}
     */
    public Permit tryAcquirePermission() {
        Phase p = phase;
        if (p instanceof Closed c && c.deciding == 0) {
            return c; // the common case, small enough to be inlined; see acquire()
        }
        return acquire();
    }

    private Permit acquire() {
        while (true) {
            Phase p = phase;
            if (p instanceof Closed c) {
                if (c.deciding == 0) {
                    return c; // no trip decided or being decided, so the word is not TRIPPED now
                }
                Bucket head = c.head;
                long w = head.word;
                if ((w & SEALED) == 0) {
                    return c;
                }
                if ((w & TRIPPED) != 0) {
                    completeTrip(c, false); // then judged as OPEN, on a clock reading made after it took effect
                } else {
                    helpClosed(c, head, w);
                }
            } else if (p instanceof Open open) {
                if (open.forced || clock.nanoTime() < open.untilNanos) {
                    rejected.increment();
                    return REFUSED;
                }
                // The mover's own permit is taken before the phase is published: once it is, other
                // threads may take the rest.
                HalfOpen half = new HalfOpen(halfOpenPermits - 1, open.opens, open.schedule);
                if (PHASE.compareAndSet(this, p, half)) {
                    emit(State.OPEN, State.HALF_OPEN);
                    return half;
                }
            } else {
                HalfOpen half = (HalfOpen) p;
                long w = half.word;
                if ((w & SEALED) != 0) {
                    if ((w & TRIPPED) != 0) {
                        completeTrip(half, false);
                    } else {
                        finishClosing(half);
                    }
                } else if ((w & PERMITS_MASK) == 0) {
                    rejected.increment();
                    return REFUSED;
                } else if (HALF_WORD.compareAndSet(half, w, w - 1)) {
                    return half;
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
        if (permit instanceof HalfOpen half) {
            while (true) {
                long w = half.word;
                if ((w & SEALED) != 0 || (w & PERMITS_MASK) >= halfOpenPermits) {
                    return; // that period is over (or the permit was already given back)
                }
                if (HALF_WORD.compareAndSet(half, w, w + 1)) {
                    return;
                }
            }
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

    private void apply(Permit permit, boolean failure, boolean slow) {
        while (true) {
            Phase p = phase;
            if (p instanceof Closed c) {
                if (recordClosed(c, failure, slow)) {
                    return;
                }
            } else if (p instanceof HalfOpen half) {
                if (recordHalfOpen(half, permit, failure)) {
                    return;
                }
            } else {
                return; // open: the breaker already refuses; the outcome changes nothing
            }
        }
    }

    /** @return false when the phase must be read again */
    private boolean recordClosed(Closed c, boolean failure, boolean slow) {
        if (!rateMode) {
            return recordConsecutive(c, failure, slow);
        }
        return failure ? recordRate(c, true, slow) : recordSuccess(c); // a slow call is a failure
    }

    /**
     * A success in rate mode, what every healthy call records, kept small enough to be inlined:
     * the common case only (a bucket that takes it, no consecutive count to clear, no reading of
     * the window that could trip); anything else is {@link #recordRate}'s.
     */
    private boolean recordSuccess(Closed c) {
        while (true) {
            Bucket head = c.head;
            long frozen = head.frozenCalls; // both read before the word: see Bucket
            long[] cells = head.cells;
            long w = head.word;
            long now = clock.coarseNanoTime(); // read after the word: the CAS below proves the word held then
            if ((w & (SEALED | (CONSECUTIVE_MASK << CONSECUTIVE_SHIFT))) != 0 || frozen >= 0 || now > head.lastNano
                    || (w & COUNT_MASK) == COUNT_MASK || mayTrip(head.baseFailures + ((w >>> FAILURES_SHIFT) & COUNT_MASK),
                            head.baseCalls + (w & COUNT_MASK) + 1)) {
                return recordRate(c, false, false);
            }
            if (cells != null) {
                return Bucket.addToCell(cells) || recordRate(c, false, false); // false: frozen meanwhile
            }
            if (WORD.compareAndSet(head, w, w + 1)) {
                return true;
            }
            head.addCells(); // contended: successes count in cells from now on
        }
    }

    /** Any outcome in rate mode; see {@link #recordSuccess} for the common one. */
    private boolean recordRate(Closed c, boolean failure, boolean slow) {
        while (true) {
            Bucket head = c.head;
            long frozen = head.frozenCalls; // both read before the word: see Bucket
            long[] cells = head.cells;
            long w = head.word;
            long now = clock.coarseNanoTime(); // read after the word: the CAS below proves the word held then
            if ((w & SEALED) != 0 || now > head.lastNano || (w & COUNT_MASK) == COUNT_MASK) {
                if (!moveOn(c, head, w, now)) { // no division unless the window moves
                    return false;
                }
                continue;
            }
            int consecutive = (int) ((w >>> CONSECUTIVE_SHIFT) & CONSECUTIVE_MASK);
            long next = (w + (failure ? (1L << FAILURES_SHIFT) + 1 : 1)) & ~(CONSECUTIVE_MASK << CONSECUTIVE_SHIFT);
            if (failure) {
                consecutive = Math.min(consecutive + 1, MAX_CONSECUTIVE); // saturates when only the rate trips
                next |= (long) consecutive << CONSECUTIVE_SHIFT;
            }
            long calls = head.baseCalls + (next & COUNT_MASK);
            long failures = head.baseFailures + ((next >>> FAILURES_SHIFT) & COUNT_MASK);
            boolean trip;
            if (consecutiveFailuresToOpen > 0 && consecutive >= consecutiveFailuresToOpen) {
                trip = true;
            } else if (frozen >= 0) {
                calls += frozen; // every success the cells will ever hold: the reading is exact
                trip = calls >= minimumCalls && reachesThreshold(failures, calls);
            } else if (mayTrip(failures, calls) && (cells == null || mayTrip(failures, calls + Bucket.cellSum(cells)))) {
                head.freeze(); // close to the threshold: decide on an exact reading
                continue;
            } else if (!failure && consecutive == 0 && cells != null && Bucket.addToCell(cells)) {
                return true; // a success that no reading of the window could make trip
            } else {
                trip = false;
            }
            if (trip) {
                if (trip(c, head, w, next, now)) {
                    return true;
                }
            } else if (WORD.compareAndSet(head, w, next)) {
                if (slow) {
                    head.slow.increment();
                }
                return true;
            } else if (!failure && cells == null && frozen < 0) {
                head.addCells(); // contended: successes count in cells from now on
            }
        }
    }

    /** The simple mode alone: only the consecutive count; a success with none to clear changes nothing. */
    private boolean recordConsecutive(Closed c, boolean failure, boolean slow) {
        while (true) {
            Bucket head = c.head;
            long w = head.word;
            if ((w & SEALED) != 0) {
                if (!moveOn(c, head, w, 0)) {
                    return false;
                }
                continue;
            }
            int consecutive = (int) ((w >>> CONSECUTIVE_SHIFT) & CONSECUTIVE_MASK);
            if (!failure && consecutive == 0) {
                return true; // nothing to change: the success path stays read-only
            }
            long next = w & ~(CONSECUTIVE_MASK << CONSECUTIVE_SHIFT);
            if (failure) {
                consecutive = Math.min(consecutive + 1, MAX_CONSECUTIVE);
                next |= (long) consecutive << CONSECUTIVE_SHIFT;
                if (consecutive >= consecutiveFailuresToOpen) {
                    if (trip(c, head, w, next, 0)) {
                        return true;
                    }
                    continue;
                }
            }
            if (WORD.compareAndSet(head, w, next)) {
                if (slow) {
                    head.slow.increment();
                }
                return true;
            }
        }
    }

    /**
     * The head can take no outcome: sealed (tripped, being reset or being replaced) or its period
     * over or full. Helps it on.
     *
     * @return false when the phase changed or must be read again, true to read the head again
     */
    private boolean moveOn(Closed c, Bucket head, long w, long now) {
        if ((w & SEALED) != 0) {
            if ((w & TRIPPED) != 0) {
                completeTrip(c, false); // then recorded against what it made of the breaker
                return false;
            }
            helpClosed(c, head, w);
            return phase == c;
        }
        rotate(c, head, w, Math.max(Math.floorDiv(now, bucketNanos), head.epoch));
        return true;
    }

    /**
     * Tries to trip on the reading {@code w} taken at {@code now} (rate mode: the period must not
     * have moved since); false when the word or the time moved and the outcome must be decided again.
     * The trip is visible once the word says TRIPPED and takes effect in {@link #completeTrip}.
     */
    private boolean trip(Closed c, Bucket head, long w, long next, long now) {
        DECIDING.getAndAdd(c, 1); // announced before the word can say TRIPPED; see tryAcquirePermission
        if ((!rateMode || clock.coarseNanoTime() == now) && WORD.compareAndSet(head, w, next | SEALED | TRIPPED)) {
            completeTrip(c, true);
            return true;
        }
        DECIDING.getAndAdd(c, -1); // the word or the time moved: decide again on a new reading
        return false;
    }

    /** @return false when the phase must be read again */
    private boolean recordHalfOpen(HalfOpen half, Permit permit, boolean failure) {
        while (true) {
            long w = half.word;
            if ((w & SEALED) != 0) {
                if ((w & TRIPPED) != 0) {
                    completeTrip(half, false); // then recorded against what it made of the breaker
                } else {
                    finishClosing(half);
                }
                return false;
            }
            if (failure) {
                if (HALF_WORD.compareAndSet(half, w, w | SEALED | TRIPPED)) {
                    completeTrip(half, true);
                    return true;
                }
            } else if (permit != half) {
                return true; // not a probe of this period: says nothing about the recovery
            } else {
                long next = w + (1L << SUCCESSES_SHIFT);
                if ((next >>> SUCCESSES_SHIFT & MAX_HALF_OPEN_PERMITS) >= halfOpenPermits) {
                    next |= SEALED | CLOSING;
                }
                if (HALF_WORD.compareAndSet(half, w, next)) {
                    if ((next & CLOSING) != 0) {
                        finishClosing(half);
                    }
                    return true;
                }
            }
        }
    }

    /** Exact {@code failures / calls >= threshold}: {@code failures·d >= n·calls} in 128 bits. */
    private boolean reachesThreshold(long failures, long calls) {
        if (smallThreshold && ((failures | calls) >>> 31) == 0) {
            return failures * thresholdDenominator >= thresholdNumerator * calls; // both products below 2^62
        }
        long leftHigh = Math.multiplyHigh(failures, thresholdDenominator);
        long rightHigh = Math.multiplyHigh(thresholdNumerator, calls);
        if (leftHigh != rightHigh) {
            return leftHigh > rightHigh;
        }
        return Long.compareUnsigned(failures * thresholdDenominator, thresholdNumerator * calls) >= 0;
    }

    /**
     * Whether some number of calls not yet seen, added to {@code calls}, could make
     * {@code failures} trip the breaker: more calls only lower the rate, so the fewest that reach
     * {@code minimumCalls} decide it. False means no reading of the window can trip now.
     */
    private boolean mayTrip(long failures, long calls) {
        return reachesThreshold(failures, Math.max(calls, minimumCalls));
    }

    /** Whether {@code p}'s word says TRIPPED: a trip visible but not yet in effect (see {@link #completeTrip}). */
    private static boolean tripping(Phase p) {
        return p instanceof Closed c ? (c.head.word & TRIPPED) != 0 : p instanceof HalfOpen h && (h.word & TRIPPED) != 0;
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
     * made again on the window there ({@link #reconsider}).
     *
     * @param decider true on the thread whose compare-and-set made the trip visible
     */
    private void completeTrip(Phase p, boolean decider) {
        if (openBackoff != null && !decider) {
            Thread.onSpinWait(); // the deciding thread publishes in its next instructions
            return;
        }
        long at = clock.nanoTime();
        if (p instanceof HalfOpen half) {
            publishOpen(half, State.HALF_OPEN, at, half.opens + 1, half.schedule);
            return;
        }
        Closed c = (Closed) p;
        if (rateMode && at > c.head.lastNano) {
            Closed continued = reconsider(c, c.head, at);
            if (continued != null) {
                PHASE.compareAndSet(this, c, continued); // the first publication stands, as for OPEN
                return;
            }
        }
        publishOpen(c, State.CLOSED, at, 1, openBackoff == null ? null : openBackoff.start(random));
    }

    /**
     * Decides again a trip made on the window of {@code head}'s period that takes effect at
     * {@code at}, in a later period: the deciding outcome (a failure when the word's consecutive
     * count is not zero, as a success clears it) is taken out of {@code head} and counted in the
     * period of {@code at}, and the rate is read on the window that ends there. The tripped word,
     * the sealed buckets and the frozen cells hold still meanwhile: no outcome is recorded on a
     * tripped phase.
     *
     * @return null when the breaker still trips; otherwise a closed phase that continues this one
     *     without the trip, with the deciding outcome in a new bucket of the period of {@code at}
     */
    private @Nullable Closed reconsider(Closed c, Bucket head, long at) {
        long w = head.word;
        int consecutive = (int) ((w >>> CONSECUTIVE_SHIFT) & CONSECUTIVE_MASK);
        if (consecutiveFailuresToOpen > 0 && consecutive >= consecutiveFailuresToOpen) {
            return null; // a count of failures in a row does not depend on the period
        }
        long outcome = consecutive > 0 ? (1L << FAILURES_SHIFT) + 1 : 1; // as a word: calls, failures
        long epoch = Math.floorDiv(at, bucketNanos);
        long cellCalls = head.freeze();
        long[] counts = sealedCounts(c.ring, epoch, head.seq - 1, head.epoch);
        long calls = counts[0] + 1;
        long failures = counts[1] + (outcome >>> FAILURES_SHIFT);
        long kept = (w & (COUNT_MASK | COUNT_MASK << FAILURES_SHIFT)) - outcome; // the head's own counts without it
        if (head.epoch > epoch - bucketCount) {
            calls += head.sameEpochCalls + (kept & COUNT_MASK) + cellCalls;
            failures += head.sameEpochFailures + (kept >>> FAILURES_SHIFT);
        }
        if (calls >= minimumCalls && reachesThreshold(failures, calls)) {
            return null;
        }
        Bucket sealed = new Bucket(head.epoch, head.lastNano, head.seq, head.baseCalls, head.baseFailures,
                head.sameEpochCalls, head.sameEpochFailures, kept | SEALED);
        sealed.cells = NO_CELLS;
        sealed.frozenCalls = cellCalls;
        sealed.slow.add(head.slow.sum());
        AtomicReferenceArray<Bucket> ring = new AtomicReferenceArray<>(bucketCount);
        for (int i = 0; i < bucketCount; i++) {
            ring.set(i, c.ring.get(i));
        }
        ring.set((int) Math.floorMod(head.epoch, (long) bucketCount), sealed); // not yet shared: no race
        long[] base = sealedCounts(ring, epoch, head.seq, Long.MIN_VALUE);
        return new Closed(newBucket(epoch, head.seq + 1, base[0], base[1], 0, 0,
                outcome | (long) consecutive << CONSECUTIVE_SHIFT), ring);
    }

    /** Publishes the open period of a trip that takes effect at {@code startedAt}; see {@link #completeTrip}. */
    private void publishOpen(Phase from, State fromState, long startedAt, int opens, Backoff.Schedule schedule) {
        long duration = openNanos;
        if (schedule != null) {
            duration = Math.max(openNanos, schedule.nextDelayNanos(opens));
        }
        long until = startedAt + duration;
        if (until < startedAt) {
            until = Long.MAX_VALUE; // overflowed (duration is never negative); a negative reading is fine
        }
        if (PHASE.compareAndSet(this, from, new Open(until, opens, schedule, false))) {
            emit(fromState, State.OPEN);
        } // else another thread published this trip first, or a reset or forced open replaced the phase, and stands
    }

    /** Moves a half-open breaker whose probes all succeeded to CLOSED; any thread may do it. */
    private void finishClosing(HalfOpen half) {
        if ((half.word & (CLOSING | RESET)) != 0) {
            replaceSealed(half, State.HALF_OPEN);
        }
    }

    /** Completes what a sealed, untripped head of a closed phase is waiting for: a new bucket or a reset. */
    private void helpClosed(Closed c, Bucket head, long w) {
        if ((w & RESET) != 0) {
            replaceSealed(c, State.CLOSED);
        } else if (c.head == head) {
            long epoch = rateMode ? Math.floorDiv(clock.coarseNanoTime(), bucketNanos) : head.epoch;
            rotate(c, head, w, Math.max(epoch, head.epoch));
        }
    }

    /** Seals {@code head} (if it is not yet) and installs a new bucket for {@code epoch} after it. */
    private void rotate(Closed c, Bucket head, long w, long epoch) {
        if ((w & SEALED) == 0) {
            if (!WORD.compareAndSet(head, w, w | SEALED)) {
                return; // changed meanwhile: the caller reads it again
            }
            w |= SEALED;
        }
        long cellCalls = head.freeze(); // before the bucket is published: a sealed bucket's counts are final
        c.publishSealed(head);
        long sameEpochCalls = 0;
        long sameEpochFailures = 0;
        if (epoch == head.epoch) {
            sameEpochCalls = head.sameEpochCalls + (w & COUNT_MASK) + cellCalls;
            sameEpochFailures = head.sameEpochFailures + ((w >>> FAILURES_SHIFT) & COUNT_MASK);
        }
        long[] base = sealedCounts(c.ring, epoch, head.seq, Long.MIN_VALUE);
        long carried = w & (CONSECUTIVE_MASK << CONSECUTIVE_SHIFT);
        HEAD.compareAndSet(c, head, newBucket(epoch, head.seq + 1, base[0], base[1], sameEpochCalls,
                sameEpochFailures, carried));
    }

    /**
     * Calls and failures of the sealed buckets inside the window that ends at {@code epoch}, up to
     * bucket {@code lastSeq} (later ones came after the reading this belongs to), leaving out the
     * period {@code skipEpoch}.
     */
    private long[] sealedCounts(AtomicReferenceArray<Bucket> ring, long epoch, long lastSeq, long skipEpoch) {
        long[] counts = new long[2];
        for (int i = 0; i < bucketCount; i++) {
            Bucket b = ring.get(i);
            if (b != null && b.seq <= lastSeq && b.epoch != skipEpoch && b.epoch > epoch - bucketCount
                    && b.epoch <= epoch) {
                long w = b.word;
                counts[0] += b.sameEpochCalls + (w & COUNT_MASK) + b.freeze();
                counts[1] += b.sameEpochFailures + ((w >>> FAILURES_SHIFT) & COUNT_MASK);
            }
        }
        return counts;
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
            if (p instanceof Closed c) {
                Bucket head = c.head;
                long w = head.word;
                if ((w & SEALED) == 0) {
                    if (WORD.compareAndSet(head, w, w | SEALED | RESET)) {
                        replaceSealed(c, State.CLOSED);
                        return;
                    }
                } else if ((w & RESET) != 0) {
                    replaceSealed(c, State.CLOSED); // another reset is finishing: this one changes nothing more
                    return;
                } else if ((w & TRIPPED) != 0) {
                    if (replaceSealed(c, State.OPEN)) {
                        return;
                    }
                } else {
                    helpClosed(c, head, w);
                }
            } else if (p instanceof HalfOpen half) {
                long w = half.word;
                if ((w & SEALED) == 0) {
                    if (HALF_WORD.compareAndSet(half, w, w | SEALED | RESET)) {
                        replaceSealed(half, State.HALF_OPEN);
                        return;
                    }
                } else if ((w & TRIPPED) == 0) {
                    replaceSealed(half, State.HALF_OPEN); // closing or being reset: closed with fresh counts either way
                    return;
                } else if (replaceSealed(half, State.OPEN)) {
                    return;
                }
            } else if (PHASE.compareAndSet(this, p, newClosed())) {
                emit(State.OPEN, State.CLOSED);
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
            if (p instanceof Open open && open.forced) {
                return;
            }
            // the phase's own state: a trip or a close being decided on it will not be published now
            State from = p instanceof Closed ? State.CLOSED : p instanceof HalfOpen ? State.HALF_OPEN : State.OPEN;
            int opens = p instanceof Streak streak ? streak.opens : 0;
            if (PHASE.compareAndSet(this, p, new Open(Long.MAX_VALUE, opens, null, true))) {
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
    private boolean replaceSealed(Phase sealed, State from) {
        if (!PHASE.compareAndSet(this, sealed, newClosed())) {
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
            if (tripping(p)) {
                completeTrip(p, false);
                continue;
            }
            if (!(p instanceof Closed c)) {
                State s = stateOf(p);
                if (p instanceof Open && phase != p) {
                    continue;
                }
                return new Metrics(s, 0, 0, 0, 0, 0, rejected.sum(), transitions.sum());
            }
            Bucket head = c.head;
            long frozen = head.frozenCalls; // both read before the word: see Bucket
            long[] cells = head.cells;
            long w = head.word;
            boolean froze = false;
            if (rateMode && frozen < 0 && (cells != null || head.cells != null)) {
                frozen = head.freeze(); // successes are being counted in cells: an exact reading freezes them
                w = head.word;
                froze = true;
            }
            if ((w & TRIPPED) != 0) {
                completeTrip(c, false);
                continue;
            }
            if ((w & SEALED) != 0) {
                helpClosed(c, head, w);
                continue;
            }
            long calls = 0;
            long failures = 0;
            long slow = 0;
            if (rateMode) {
                long epoch = Math.floorDiv(clock.coarseNanoTime(), bucketNanos);
                if (head.word != w) {
                    continue; // changed while the clock was read: read again
                }
                long headCalls = (w & COUNT_MASK) + Math.max(0, frozen);
                if (epoch <= head.epoch) {
                    calls = head.baseCalls + headCalls;
                    failures = head.baseFailures + ((w >>> FAILURES_SHIFT) & COUNT_MASK);
                } else {
                    // the head's own period is counted through the head, whose figures include its predecessors
                    long[] sealed = sealedCounts(c.ring, epoch, head.seq - 1, head.epoch);
                    calls = sealed[0];
                    failures = sealed[1];
                    if (head.epoch > epoch - bucketCount) {
                        calls += head.sameEpochCalls + headCalls;
                        failures += head.sameEpochFailures + ((w >>> FAILURES_SHIFT) & COUNT_MASK);
                    }
                }
                slow = c.slowCalls(epoch, bucketCount);
                if (froze) {
                    // later successes spread over cells again, in a new bucket of the same period
                    rotate(c, head, w, Math.max(epoch, head.epoch));
                }
            }
            int consecutive = (int) ((w >>> CONSECUTIVE_SHIFT) & CONSECUTIVE_MASK);
            return new Metrics(State.CLOSED, calls, failures, slow, calls == 0 ? 0 : failures / (double) calls,
                    consecutive, rejected.sum(), transitions.sum());
        }
    }

    /** The exception to throw for a refused call; {@code cause} and {@code lastResult} may be null. */
    CircuitOpenException openException(@Nullable Throwable cause, @Nullable Object lastResult) {
        Phase p = phase;
        while (tripping(p)) {
            completeTrip(p, false);
            p = phase;
        }
        long wait = 0;
        if (p instanceof Open open) {
            wait = open.forced ? openNanos : Math.max(0, open.untilNanos - clock.nanoTime());
        }
        return new CircuitOpenException(name, Duration.ofNanos(wait), cause, lastResult);
    }

    /** True when slow calls are counted, so callers must measure each call's duration. */
    boolean measuresDuration() {
        return slowCallNanos > 0;
    }

    private void emit(State from, State to) {
        transitions.increment();
        if (!listeners.isEmpty()) {
            Transition t = new Transition(name, from, to, Instant.ofEpochMilli(clock.currentTimeMillis()));
            for (Listener l : listeners) {
                try {
                    l.onTransition(t);
                } catch (RuntimeException ignored) {
                    // a listener must not break the breaker
                }
            }
        }
    }

    /** A bucket for the period {@code epoch}, with the last clock reading of that period. */
    private Bucket newBucket(long epoch, long seq, long baseCalls, long baseFailures, long sameEpochCalls,
                             long sameEpochFailures, long word) {
        Bucket b = new Bucket(epoch, lastNanoOf(epoch), seq, baseCalls, baseFailures, sameEpochCalls,
                sameEpochFailures, word);
        if (cellsFromStart && rateMode) {
            b.addCells();
        }
        return b;
    }

    /**
     * The last clock reading of the period {@code epoch} (periods are {@code floorDiv(reading,
     * bucketNanos)}), so that a reading is compared with it instead of divided; the last period a
     * {@code long} can reach ends at {@link Long#MAX_VALUE}.
     */
    private long lastNanoOf(long epoch) {
        if (epoch >= Math.floorDiv(Long.MAX_VALUE, bucketNanos)) {
            return Long.MAX_VALUE;
        }
        return epoch * bucketNanos + (bucketNanos - 1); // exact: the true value is a long (intermediates may wrap)
    }

    private Closed newClosed() {
        long epoch = rateMode ? Math.floorDiv(clock.coarseNanoTime(), bucketNanos) : 0;
        return new Closed(newBucket(epoch, 0, 0, 0, 0, 0, 0), rateMode ? bucketCount : 0);
    }

    @Override
    public String toString() {
        return "CircuitBreaker{" + name + ", " + state() + "}";
    }

    // ---- phases: each one is also the permit it issues ----

    private abstract static class Phase extends Permit {
    }

    private static final class Closed extends Phase {
        /** The current bucket; replaced (after being sealed) when the window moves. */
        volatile Bucket head;
        /** Sealed buckets by epoch modulo the bucket count (rate mode only). */
        final AtomicReferenceArray<Bucket> ring;
        /**
         * Threads about to try the compare-and-set that trips this phase; never lowered by the one
         * that succeeds. Zero therefore means the word is not TRIPPED, and the permission check
         * can grant without reading the word every outcome writes.
         */
        volatile int deciding;

        Closed(Bucket head, int bucketCount) {
            this.head = head;
            this.ring = new AtomicReferenceArray<>(bucketCount);
        }

        /** A phase that continues an earlier one's sealed buckets. */
        Closed(Bucket head, AtomicReferenceArray<Bucket> ring) {
            this.head = head;
            this.ring = ring;
        }

        @Override
        public boolean isGranted() {
            return true;
        }

        /** Files a sealed bucket in the ring; a later bucket is never replaced by an earlier one. */
        void publishSealed(Bucket sealed) {
            int index = (int) Math.floorMod(sealed.epoch, (long) ring.length());
            while (true) {
                Bucket current = ring.get(index);
                if (current != null && current.seq >= sealed.seq) {
                    return;
                }
                if (ring.compareAndSet(index, current, sealed)) {
                    return;
                }
            }
        }

        long slowCalls(long epoch, int bucketCount) {
            long slow = 0;
            Bucket h = head;
            if (h.epoch > epoch - bucketCount) {
                slow += h.slow.sum();
            }
            for (int i = 0; i < ring.length(); i++) {
                Bucket b = ring.get(i);
                if (b != null && b != h && b.epoch > epoch - bucketCount) {
                    slow += b.slow.sum();
                }
            }
            return slow;
        }

        @Override
        public String toString() {
            return "Permit{closed}";
        }
    }

    /** A phase of an open streak: the opens in a row so far and the one schedule they draw from. */
    private abstract static class Streak extends Phase {
        final int opens;
        /** Kept across the re-opens in a row, so stateful backoffs grow as they do in a retry. */
        final Backoff.Schedule schedule;

        Streak(int opens, Backoff.Schedule schedule) {
            this.opens = opens;
            this.schedule = schedule;
        }
    }

    private static final class Open extends Streak {
        final long untilNanos;
        /** Held open by {@link #forceOpen()}: no probe until {@link #reset()}. */
        final boolean forced;

        Open(long untilNanos, int opens, Backoff.Schedule schedule, boolean forced) {
            super(opens, schedule);
            this.untilNanos = untilNanos;
            this.forced = forced;
        }

        @Override
        public boolean isGranted() {
            return false;
        }
    }

    private static final class HalfOpen extends Streak {
        /** [flags][successes][permits left]. */
        volatile long word;

        HalfOpen(int permitsLeft, int opens, Backoff.Schedule schedule) {
            super(opens, schedule);
            this.word = permitsLeft;
        }

        @Override
        public boolean isGranted() {
            return true;
        }

        @Override
        public String toString() {
            return "Permit{probe}";
        }
    }

    /**
     * One bucket of the window: its own counts live in {@code word}; what came before is fixed.
     *
     * <p>Under contention, successes that no reading of the window could make trip are counted in
     * {@code cells} instead of the word: one counter per stripe, each on its own cache line, chosen
     * by thread. A reading that needs the bucket's calls exactly (a decision close to the threshold,
     * the window moving on, {@code metrics()}) first freezes every cell for good and publishes the
     * total in {@code frozenCalls}; a success that finds its cell frozen counts through the word.
     * Readers read {@code frozenCalls} and {@code cells} before the word: a frozen total read before
     * the word holds every success the cells will ever hold, and cells still null after the word was
     * read mean no success counted in cells before that reading.
     */
    private static final class Bucket {
        final long epoch;
        /** The last clock reading of the period {@code epoch}. */
        final long lastNano;
        /** Position in the phase's sequence of buckets. */
        final long seq;
        /** Calls and failures of the sealed buckets inside the window ending at this epoch. */
        final long baseCalls;
        final long baseFailures;
        /** Calls and failures of earlier (full) buckets of this same epoch. */
        final long sameEpochCalls;
        final long sameEpochFailures;
        volatile long word;
        final LongAdder slow = new LongAdder();
        /** Successes counted beside the word (null until two threads contend on it); see the class. */
        volatile long @Nullable [] cells;
        /** The cells' total once they are frozen; -1 before. */
        volatile long frozenCalls = -1;

        Bucket(long epoch, long lastNano, long seq, long baseCalls, long baseFailures, long sameEpochCalls,
               long sameEpochFailures, long word) {
            this.epoch = epoch;
            this.lastNano = lastNano;
            this.seq = seq;
            this.baseCalls = baseCalls;
            this.baseFailures = baseFailures;
            this.sameEpochCalls = sameEpochCalls;
            this.sameEpochFailures = sameEpochFailures;
            this.word = word;
        }

        /** Adds one success to the calling thread's cell; false when the cells are frozen. */
        static boolean addToCell(long[] cells) {
            if (cells == NO_CELLS) {
                return false;
            }
            int stripe = (int) Thread.currentThread().getId();
            for (int tries = 0; ; tries++) {
                int i = CELL_PAD * (1 + ((stripe + tries) & (STRIPES - 1)));
                long v = (long) CELL.getVolatile(cells, i);
                if (v < 0) {
                    return false;
                }
                if (CELL.compareAndSet(cells, i, v, v + 1)) {
                    return true;
                }
            }
        }

        /** The successes the cells hold now (a lower bound of what they will hold). */
        static long cellSum(long[] cells) {
            long sum = 0;
            for (int i = CELL_PAD; i < cells.length - CELL_PAD; i += CELL_PAD) {
                sum += (long) CELL.getVolatile(cells, i) & ~FROZEN_CELL;
            }
            return sum;
        }

        /** Starts counting successes in cells, unless another thread did or the cells are frozen. */
        void addCells() {
            CELLS.compareAndSet(this, null, new long[CELL_PAD * (STRIPES + 2)]);
        }

        /** Freezes the cells for good (idempotent; any thread may do it) and returns their total. */
        long freeze() {
            long total = frozenCalls;
            if (total >= 0) {
                return total;
            }
            long[] cs = cells;
            while (cs == null) {
                if (CELLS.compareAndSet(this, null, NO_CELLS)) {
                    cs = NO_CELLS;
                } else {
                    cs = cells;
                }
            }
            total = 0;
            for (int i = CELL_PAD; i < cs.length - CELL_PAD; i += CELL_PAD) {
                long v;
                do {
                    v = (long) CELL.getVolatile(cs, i);
                } while (v >= 0 && !CELL.compareAndSet(cs, i, v, v | FROZEN_CELL));
                total += v & ~FROZEN_CELL;
            }
            frozenCalls = total;
            return total;
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
            this.consecutiveFailures = Checks.atLeast("consecutiveFailures", consecutiveFailures, 1);
            if (consecutiveFailures > MAX_CONSECUTIVE) {
                throw new IllegalArgumentException("consecutiveFailures must be at most " + MAX_CONSECUTIVE + ", got "
                        + consecutiveFailures);
            }
            return this;
        }

        /** The sliding window of the failure rate. Default 30 s. */
        public Builder window(Duration window) {
            this.window = Checks.positive("window", window);
            return this;
        }

        /** Buckets the window is divided into; 1 to 1000. Default 10. */
        public Builder buckets(int buckets) {
            this.buckets = Checks.atLeast("buckets", buckets, 1);
            if (buckets > 1000) {
                throw new IllegalArgumentException("buckets must be at most 1000, got " + buckets);
            }
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
            this.halfOpenPermits = Checks.atLeast("halfOpenPermits", permits, 1);
            if (permits > MAX_HALF_OPEN_PERMITS) {
                throw new IllegalArgumentException("halfOpenPermits must be at most " + MAX_HALF_OPEN_PERMITS + ", got "
                        + permits);
            }
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
