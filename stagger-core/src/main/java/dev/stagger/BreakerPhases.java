package dev.stagger;

import dev.stagger.CircuitBreaker.Permit;
import dev.stagger.CircuitBreaker.Phase;
import dev.stagger.CircuitBreaker.State;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.atomic.LongAdder;
import org.jspecify.annotations.Nullable;

/**
 * A {@link CircuitBreaker}'s current phase and every transition between phases: the one field
 * changed by compare-and-set, admission in each phase, the publication of a trip, and the
 * operator's reset and forced open. The breaker's class comment states the rules this keeps and
 * its concurrency notes, which this implements; {@link SlidingWindow} decides trips in the closed
 * phase and {@link HalfOpenPhase} counts probes, both calling back here to move the phase.
 */
final class BreakerPhases {
    private static final VarHandle PHASE;

    static {
        try {
            PHASE = MethodHandles.lookup().findVarHandle(BreakerPhases.class, "phase", Phase.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final String name;
    /** The closed state's counting and trip decision. */
    final SlidingWindow window;
    private final long openNanos;
    private final @Nullable Backoff openBackoff;
    private final int halfOpenPermits;
    private final Clock clock;
    private final RandomSource random;
    final TransitionListeners listeners = new TransitionListeners();
    final LongAdder rejected = new LongAdder();

    /** Read directly, changed only through {@link #PHASE}. */
    volatile Phase phase;

    BreakerPhases(CircuitBreaker.Builder b, long windowNanos, long openNanos) {
        this.name = b.name;
        this.window = new SlidingWindow(this, !b.rateModeDisabled(), b.failureRateThreshold, b.minimumCalls,
                b.consecutiveFailures, windowNanos, b.buckets, b.clock, b.cellsFromStart);
        this.openNanos = openNanos;
        this.openBackoff = b.openBackoff;
        this.halfOpenPermits = b.halfOpenPermits;
        this.clock = b.clock;
        this.random = b.random;
        this.phase = window.newClosed();
    }

    /** See {@link CircuitBreaker#state()}. */
    State state() {
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

    /** The slow path of {@link CircuitBreaker#tryAcquirePermission()}. */
    Permit acquire() {
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
                    return CircuitBreaker.REFUSED;
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
                    return CircuitBreaker.REFUSED;
                }
            }
        }
    }

    /** See {@link CircuitBreaker#releasePermission(Permit)}. */
    void release(Permit permit) {
        if (permit instanceof HalfOpenPhase half) {
            half.release(halfOpenPermits);
        }
    }

    /** Counts a granted permit's outcome in the phase that is current. */
    void apply(Permit permit, boolean failure, boolean slow) {
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
     * {@code openBackoff} the period's length is drawn from the schedule, once, by the deciding
     * thread alone: another thread waits for it instead (returns at once, to read the phase again).
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

    /** See {@link CircuitBreaker#reset()}. */
    void reset() {
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

    /** See {@link CircuitBreaker#forceOpen()}. */
    void forceOpen() {
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

    /** See {@link CircuitBreaker#metrics()}. */
    CircuitBreaker.Metrics metrics() {
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
                return new CircuitBreaker.Metrics(s, 0, 0, 0, 0, 0, rejected.sum(), listeners.count());
            }
            long[] counts = window.counts(c); // calls, failures, slow calls, consecutive failures
            if (counts == null) {
                continue;
            }
            long calls = counts[0];
            return new CircuitBreaker.Metrics(State.CLOSED, calls, counts[1], counts[2],
                    calls == 0 ? 0 : counts[1] / (double) calls, (int) counts[3], rejected.sum(), listeners.count());
        }
    }

    /** How long until a probe is let through, in nanoseconds: 0 unless open; {@code openNanos} when forced. */
    long openWaitNanos() {
        Phase p = phase;
        while (p.tripping()) {
            completeTrip(p, false);
            p = phase;
        }
        if (p instanceof OpenPhase open) {
            return open.forced ? openNanos : Math.max(0, open.untilNanos - clock.nanoTime());
        }
        return 0;
    }

    private void emit(State from, State to) {
        listeners.emit(name, from, to, clock);
    }
}
