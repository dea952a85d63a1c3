package dev.stagger;

import static dev.stagger.BreakerWord.CLOSING;
import static dev.stagger.BreakerWord.MAX_HALF_OPEN_PERMITS;
import static dev.stagger.BreakerWord.PERMITS_MASK;
import static dev.stagger.BreakerWord.RESET;
import static dev.stagger.BreakerWord.SEALED;
import static dev.stagger.BreakerWord.SUCCESSES_SHIFT;
import static dev.stagger.BreakerWord.TRIPPED;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import org.jspecify.annotations.Nullable;

/**
 * A {@link CircuitBreaker}'s half-open phase, which is also the probe permit it issues: the probes
 * left and the successes so far in one word ({@link BreakerWord}) changed by compare-and-set; a
 * failure trips it, the last success closes it. Sealed, it takes nothing more, and the breaker
 * completes what the word shows.
 */
final class HalfOpenPhase extends StreakPhase {
    /** What {@link #tryTakeProbe()} did. */
    static final int TAKEN = 1;
    static final int NONE_LEFT = 0;
    static final int READ_AGAIN = -1;

    private static final VarHandle WORD;

    static {
        try {
            WORD = MethodHandles.lookup().findVarHandle(HalfOpenPhase.class, "word", long.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /** [flags][successes][permits left]; read directly, changed only through {@link #casWord}. */
    volatile long word;

    HalfOpenPhase(int permitsLeft, int opens, Backoff.@Nullable Schedule schedule) {
        super(opens, schedule);
        this.word = permitsLeft;
    }

    boolean casWord(long expected, long next) {
        return WORD.compareAndSet(this, expected, next);
    }

    /**
     * One try at taking a probe permit: {@link #READ_AGAIN} when the word is sealed (the breaker
     * has been helped to complete it) or changed meanwhile, and the phase must be read again.
     */
    int tryTakeProbe(BreakerPhases breaker) {
        long w = word;
        if ((w & SEALED) != 0) {
            help(breaker, w);
            return READ_AGAIN;
        }
        if ((w & PERMITS_MASK) == 0) {
            return NONE_LEFT;
        }
        return casWord(w, w - 1) ? TAKEN : READ_AGAIN;
    }

    /** Gives back a probe permit of this period, unless it is over or every permit is back already. */
    void release(int permits) {
        while (true) {
            long w = word;
            if ((w & SEALED) != 0 || (w & PERMITS_MASK) >= permits) {
                return; // that period is over (or the permit was already given back)
            }
            if (casWord(w, w + 1)) {
                return;
            }
        }
    }

    /**
     * Records an outcome: a failure trips the breaker, a success of one of this period's probes
     * counts, and the last of {@code permits} closes it.
     *
     * @return false when the phase must be read again
     */
    boolean record(BreakerPhases breaker, CircuitBreaker.Permit permit, boolean failure, int permits) {
        while (true) {
            long w = word;
            if ((w & SEALED) != 0) {
                help(breaker, w); // then recorded against what it made of the breaker
                return false;
            }
            if (failure) {
                if (casWord(w, w | SEALED | TRIPPED)) {
                    breaker.completeTrip(this, true);
                    return true;
                }
            } else if (permit != this) {
                return true; // not a probe of this period: says nothing about the recovery
            } else {
                long next = w + (1L << SUCCESSES_SHIFT);
                if ((next >>> SUCCESSES_SHIFT & MAX_HALF_OPEN_PERMITS) >= permits) {
                    next |= SEALED | CLOSING;
                }
                if (casWord(w, next)) {
                    if ((next & CLOSING) != 0) {
                        finishClosing(breaker);
                    }
                    return true;
                }
            }
        }
    }

    /** Completes what the sealed word {@code w} shows: a trip, a close or a reset. */
    private void help(BreakerPhases breaker, long w) {
        if ((w & TRIPPED) != 0) {
            breaker.completeTrip(this, false);
        } else {
            finishClosing(breaker);
        }
    }

    /** Moves a half-open breaker whose probes all succeeded to CLOSED; any thread may do it. */
    private void finishClosing(BreakerPhases breaker) {
        if (closing()) {
            breaker.replaceSealed(this, CircuitBreaker.State.HALF_OPEN);
        }
    }

    /**
     * One step of {@code reset()} on this phase: seals the word for the reset and replaces the
     * phase, or completes what another thread sealed it for.
     *
     * @return false when the phase must be read again
     */
    boolean reset(BreakerPhases breaker) {
        long w = word;
        if ((w & SEALED) == 0) {
            if (!casWord(w, w | SEALED | RESET)) {
                return false;
            }
        } else if ((w & TRIPPED) != 0) {
            return breaker.replaceSealed(this, CircuitBreaker.State.OPEN);
        } // else closing or being reset: closed with fresh counts either way
        breaker.replaceSealed(this, CircuitBreaker.State.HALF_OPEN);
        return true;
    }

    @Override
    boolean tripping() {
        return (word & TRIPPED) != 0;
    }

    /** Whether the phase is closing with fresh counts: every probe succeeded, or a reset sealed it. */
    boolean closing() {
        return (word & (CLOSING | RESET)) != 0;
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
