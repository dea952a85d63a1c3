package dev.stagger;

import static dev.stagger.BreakerWord.CONSECUTIVE_MASK;
import static dev.stagger.BreakerWord.CONSECUTIVE_SHIFT;
import static dev.stagger.BreakerWord.COUNT_MASK;
import static dev.stagger.BreakerWord.FAILURES_SHIFT;
import static dev.stagger.BreakerWord.MAX_CONSECUTIVE;
import static dev.stagger.BreakerWord.RESET;
import static dev.stagger.BreakerWord.SEALED;
import static dev.stagger.BreakerWord.TRIPPED;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.concurrent.atomic.AtomicReferenceArray;
import org.jspecify.annotations.Nullable;

/**
 * How a {@link CircuitBreaker}'s closed state counts and decides: outcomes recorded into the
 * {@link ClosedPhase}'s buckets by compare-and-set of their words ({@link BreakerWord}), the
 * window moved on when a bucket's period is over or it is full, and the trip decided on one
 * consistent reading of the window (see the breaker's concurrency notes, which this implements).
 * One per breaker; the breaker makes the transitions a decision calls for.
 */
final class SlidingWindow {
    private final BreakerPhases breaker;
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
    private final Clock clock;
    /** Tests only: every bucket counts successes in cells from the start, as under contention. */
    private final boolean cellsFromStart;

    SlidingWindow(BreakerPhases breaker, boolean rateMode, double failureRateThreshold, int minimumCalls,
                  int consecutiveFailuresToOpen, long windowNanos, int bucketCount, Clock clock,
                  boolean cellsFromStart) {
        this.breaker = breaker;
        this.rateMode = rateMode;
        BigDecimal threshold = BigDecimal.valueOf(failureRateThreshold);
        BigInteger numerator = threshold.unscaledValue();
        BigInteger denominator = BigInteger.TEN.pow(Math.max(0, threshold.scale()));
        if (threshold.scale() < 0) {
            numerator = numerator.multiply(BigInteger.TEN.pow(-threshold.scale()));
        }
        BigInteger gcd = numerator.gcd(denominator);
        this.thresholdNumerator = numerator.divide(gcd).longValueExact();
        this.thresholdDenominator = denominator.divide(gcd).longValueExact();
        this.smallThreshold = thresholdNumerator < (1L << 31) && thresholdDenominator < (1L << 31);
        this.minimumCalls = minimumCalls;
        this.consecutiveFailuresToOpen = consecutiveFailuresToOpen;
        this.bucketCount = bucketCount;
        this.bucketNanos = Math.max(1, windowNanos / bucketCount);
        this.clock = clock;
        this.cellsFromStart = cellsFromStart;
    }

    /**
     * Whether {@code c} grants a permit now, read while a trip may be being decided on it: false
     * when its head is sealed, which has then been helped on, and the phase must be read again.
     */
    boolean admits(ClosedPhase c) {
        WindowBucket head = c.head;
        long w = head.word;
        if ((w & SEALED) == 0) {
            return true;
        }
        helpSealed(c, head, w); // a trip is then judged as OPEN, on a clock reading made after it took effect
        return false;
    }

    /**
     * One step of {@code reset()} on {@code c}: seals its head for the reset and replaces the phase,
     * or completes what another thread sealed it for.
     *
     * @return false when the phase must be read again
     */
    boolean reset(ClosedPhase c) {
        WindowBucket head = c.head;
        long w = head.word;
        if ((w & SEALED) == 0) {
            if (!head.casWord(w, w | SEALED | RESET)) {
                return false;
            }
            breaker.replaceSealed(c, CircuitBreaker.State.CLOSED);
            return true;
        }
        if ((w & RESET) != 0) {
            breaker.replaceSealed(c, CircuitBreaker.State.CLOSED); // another reset is finishing: this one changes nothing more
            return true;
        }
        if ((w & TRIPPED) != 0) {
            return breaker.replaceSealed(c, CircuitBreaker.State.OPEN);
        }
        helpClosed(c, head, w);
        return false;
    }

    /** Completes what the sealed head {@code w} of {@code c} shows: a trip, a reset or a new bucket. */
    private void helpSealed(ClosedPhase c, WindowBucket head, long w) {
        if ((w & TRIPPED) != 0) {
            breaker.completeTrip(c, false);
        } else {
            helpClosed(c, head, w);
        }
    }

    /** @return false when the phase must be read again */
    boolean record(ClosedPhase c, boolean failure, boolean slow) {
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
    private boolean recordSuccess(ClosedPhase c) {
        while (true) {
            WindowBucket head = c.head;
            long frozen = head.frozenCalls; // both read before the word: see WindowBucket
            long[] cells = head.cells;
            long w = head.word;
            long now = clock.coarseNanoTime(); // read after the word: the CAS below proves the word held then
            if ((w & (SEALED | (CONSECUTIVE_MASK << CONSECUTIVE_SHIFT))) != 0 || frozen >= 0 || now > head.lastNano
                    || (w & COUNT_MASK) == COUNT_MASK || mayTrip(head.baseFailures + ((w >>> FAILURES_SHIFT) & COUNT_MASK),
                            head.baseCalls + (w & COUNT_MASK) + 1)) {
                return recordRate(c, false, false);
            }
            if (cells != null) {
                return WindowBucket.addToCell(cells) || recordRate(c, false, false); // false: frozen meanwhile
            }
            if (head.casWord(w, w + 1)) {
                return true;
            }
            head.addCells(); // contended: successes count in cells from now on
        }
    }

    /** Any outcome in rate mode; see {@link #recordSuccess} for the common one. */
    private boolean recordRate(ClosedPhase c, boolean failure, boolean slow) {
        while (true) {
            WindowBucket head = c.head;
            long frozen = head.frozenCalls; // both read before the word: see WindowBucket
            long[] cells = head.cells;
            long w = head.word;
            long now = clock.coarseNanoTime(); // read after the word: the CAS below proves the word held then
            if ((w & SEALED) != 0 || now > head.lastNano || (w & COUNT_MASK) == COUNT_MASK) {
                if (!moveOn(c, head, w, now)) { // no division unless the window moves
                    return false;
                }
                continue;
            }
            int consecutive = BreakerWord.consecutive(w);
            long next = (w + (failure ? (1L << FAILURES_SHIFT) + 1 : 1)) & ~(CONSECUTIVE_MASK << CONSECUTIVE_SHIFT);
            if (failure) {
                consecutive = Math.min(consecutive + 1, MAX_CONSECUTIVE); // saturates when only the rate trips
                next |= (long) consecutive << CONSECUTIVE_SHIFT;
            }
            long calls = head.baseCalls + BreakerWord.calls(next);
            long failures = head.baseFailures + BreakerWord.failures(next);
            boolean trip;
            if (consecutiveFailuresToOpen > 0 && consecutive >= consecutiveFailuresToOpen) {
                trip = true;
            } else if (frozen >= 0) {
                calls += frozen; // every success the cells will ever hold: the reading is exact
                trip = calls >= minimumCalls && reachesThreshold(failures, calls);
            } else if (mayTrip(failures, calls)
                    && (cells == null || mayTrip(failures, calls + WindowBucket.cellSum(cells)))) {
                head.freeze(); // close to the threshold: decide on an exact reading
                continue;
            } else if (!failure && consecutive == 0 && cells != null && WindowBucket.addToCell(cells)) {
                return true; // a success that no reading of the window could make trip
            } else {
                trip = false;
            }
            if (trip) {
                if (trip(c, head, w, next, now)) {
                    return true;
                }
            } else if (head.casWord(w, next)) {
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
    private boolean recordConsecutive(ClosedPhase c, boolean failure, boolean slow) {
        while (true) {
            WindowBucket head = c.head;
            long w = head.word;
            if ((w & SEALED) != 0) {
                if (!moveOn(c, head, w, 0)) {
                    return false;
                }
                continue;
            }
            int consecutive = BreakerWord.consecutive(w);
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
            if (head.casWord(w, next)) {
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
    private boolean moveOn(ClosedPhase c, WindowBucket head, long w, long now) {
        if ((w & SEALED) != 0) {
            if ((w & TRIPPED) != 0) {
                breaker.completeTrip(c, false); // then recorded against what it made of the breaker
                return false;
            }
            helpClosed(c, head, w);
            return breaker.isPhase(c);
        }
        rotate(c, head, w, Math.max(Math.floorDiv(now, bucketNanos), head.epoch));
        return true;
    }

    /**
     * Tries to trip on the reading {@code w} taken at {@code now} (rate mode: the period must not
     * have moved since); false when the word or the time moved and the outcome must be decided again.
     * The trip is visible once the word says TRIPPED and takes effect in {@code BreakerPhases.completeTrip}.
     */
    private boolean trip(ClosedPhase c, WindowBucket head, long w, long next, long now) {
        c.announceDecision(); // before the word can say TRIPPED; see the breaker's tryAcquirePermission
        if ((!rateMode || clock.coarseNanoTime() == now) && head.casWord(w, next | SEALED | TRIPPED)) {
            breaker.completeTrip(c, true);
            return true;
        }
        c.withdrawDecision(); // the word or the time moved: decide again on a new reading
        return false;
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

    /**
     * Decides again a trip of {@code c} that takes effect at {@code at}, when that reading falls in
     * a later period than the window the decision was made on (rate mode only): the deciding
     * outcome (a failure when the word's consecutive count is not zero, as a success clears it) is
     * taken out of the head and counted in the period of {@code at}, and the rate is read on the
     * window that ends there. The tripped word, the sealed buckets and the frozen cells hold still
     * meanwhile: no outcome is recorded on a tripped phase.
     *
     * @return null when the trip stands; otherwise a closed phase that continues {@code c} without
     *     the trip, with the deciding outcome in a new bucket of the period of {@code at}
     */
    @Nullable ClosedPhase reconsider(ClosedPhase c, long at) {
        WindowBucket head = c.head;
        if (!rateMode || at <= head.lastNano) {
            return null;
        }
        long w = head.word;
        int consecutive = BreakerWord.consecutive(w);
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
        WindowBucket sealed = new WindowBucket(head.epoch, head.lastNano, head.seq, head.baseCalls, head.baseFailures,
                head.sameEpochCalls, head.sameEpochFailures, kept | SEALED);
        sealed.cells = WindowBucket.NO_CELLS;
        sealed.frozenCalls = cellCalls;
        sealed.slow.add(head.slow.sum());
        AtomicReferenceArray<WindowBucket> ring = new AtomicReferenceArray<>(bucketCount);
        for (int i = 0; i < bucketCount; i++) {
            ring.set(i, c.ring.get(i));
        }
        ring.set((int) Math.floorMod(head.epoch, (long) bucketCount), sealed); // not yet shared: no race
        long[] base = sealedCounts(ring, epoch, head.seq, Long.MIN_VALUE);
        return new ClosedPhase(newBucket(epoch, head.seq + 1, base[0], base[1], 0, 0,
                outcome | (long) consecutive << CONSECUTIVE_SHIFT), ring);
    }

    /** Completes what a sealed, untripped head of a closed phase is waiting for: a new bucket or a reset. */
    private void helpClosed(ClosedPhase c, WindowBucket head, long w) {
        if ((w & RESET) != 0) {
            breaker.replaceSealed(c, CircuitBreaker.State.CLOSED);
        } else if (c.head == head) {
            long epoch = rateMode ? Math.floorDiv(clock.coarseNanoTime(), bucketNanos) : head.epoch;
            rotate(c, head, w, Math.max(epoch, head.epoch));
        }
    }

    /** Seals {@code head} (if it is not yet) and installs a new bucket for {@code epoch} after it. */
    private void rotate(ClosedPhase c, WindowBucket head, long w, long epoch) {
        if ((w & SEALED) == 0) {
            if (!head.casWord(w, w | SEALED)) {
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
        c.casHead(head, newBucket(epoch, head.seq + 1, base[0], base[1], sameEpochCalls, sameEpochFailures, carried));
    }

    /**
     * Calls and failures of the sealed buckets inside the window that ends at {@code epoch}, up to
     * bucket {@code lastSeq} (later ones came after the reading this belongs to), leaving out the
     * period {@code skipEpoch}.
     */
    private long[] sealedCounts(AtomicReferenceArray<WindowBucket> ring, long epoch, long lastSeq, long skipEpoch) {
        long[] counts = new long[2];
        for (int i = 0; i < bucketCount; i++) {
            WindowBucket b = ring.get(i);
            if (b != null && b.seq <= lastSeq && b.epoch != skipEpoch && b.epoch > epoch - bucketCount
                    && b.epoch <= epoch) {
                long w = b.word;
                counts[0] += b.sameEpochCalls + (w & COUNT_MASK) + b.freeze();
                counts[1] += b.sameEpochFailures + ((w >>> FAILURES_SHIFT) & COUNT_MASK);
            }
        }
        return counts;
    }

    /**
     * One reading of the closed window for {@code metrics()}: calls, failures, slow calls and the
     * consecutive count; null when the phase must be read again (it was tripped, sealed or moved).
     */
    long @Nullable [] counts(ClosedPhase c) {
        WindowBucket head = c.head;
        long frozen = head.frozenCalls; // both read before the word: see WindowBucket
        long[] cells = head.cells;
        long w = head.word;
        boolean froze = false;
        if (rateMode && frozen < 0 && (cells != null || head.cells != null)) {
            frozen = head.freeze(); // successes are being counted in cells: an exact reading freezes them
            w = head.word;
            froze = true;
        }
        if ((w & SEALED) != 0) {
            helpSealed(c, head, w); // tripped, being reset or being replaced
            return null;
        }
        long calls = 0;
        long failures = 0;
        long slow = 0;
        if (rateMode) {
            long epoch = Math.floorDiv(clock.coarseNanoTime(), bucketNanos);
            if (head.word != w) {
                return null; // changed while the clock was read: read again
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
        return new long[] {calls, failures, slow, BreakerWord.consecutive(w)};
    }

    /** A fresh closed phase: one empty bucket for the current period. */
    ClosedPhase newClosed() {
        long epoch = rateMode ? Math.floorDiv(clock.coarseNanoTime(), bucketNanos) : 0;
        return new ClosedPhase(newBucket(epoch, 0, 0, 0, 0, 0, 0), rateMode ? bucketCount : 0);
    }

    /** A bucket for the period {@code epoch}, with the last clock reading of that period. */
    private WindowBucket newBucket(long epoch, long seq, long baseCalls, long baseFailures, long sameEpochCalls,
                                   long sameEpochFailures, long word) {
        WindowBucket b = new WindowBucket(epoch, lastNanoOf(epoch), seq, baseCalls, baseFailures, sameEpochCalls,
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
}
