package dev.stagger;

import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import org.jspecify.annotations.Nullable;

/**
 * A {@link Retry}'s hedging at run time: its {@link HedgePolicy}, the recent latencies a
 * percentile delay reads, the share of first attempts outliving the delay, and the hedges'
 * credit. Shared by the copies a {@code with...} method makes on the same clock. Thread-safe and
 * lock-free.
 *
 * <p><b>Hedges pay for themselves.</b> A hedge helps only when the slowness it backs up is the
 * attempt's own (a slow replica, a lost packet, a pause); when every attempt is slow for the same
 * reason (a saturated server, a queue) the hedge waits behind the first and only adds load. Two
 * guards refuse hedges then, both checked only when a delay has passed:
 * <ul>
 *   <li><b>Overload.</b> When more than {@link HedgePolicy#maxSlowShare()} of the first attempts
 *       of about the last second outlived their delay, by more than chance (see
 *       {@link SlowShare#above}), the slowness is everyone's: no hedge is sent until the share
 *       falls again. The delays keep firing meanwhile (that is how the share is measured), only
 *       the hedges are refused. A first attempt is counted where hedging already looks at it: where a percentile
 *       delay records its latency, and where its delay fires; a fixed delay counts them only when
 *       the policy sets a share (otherwise a call answered in time does nothing here).</li>
 *   <li><b>Credit.</b> A hedge spends one credit and a hedge that wins earns {@value #WIN_CREDIT}:
 *       hedging goes on while at least one hedge in {@value #WIN_CREDIT} wins, and stops when
 *       hedges keep losing. Credit comes back at one every ten seconds, up to {@value #MAX_CREDIT},
 *       so hedging is tried again after an overload has passed. A new retry starts with
 *       {@value #INITIAL_CREDIT}, one win's worth, not full: enough to learn whether hedges win,
 *       without a burst of twenty hedges into a server that may already be saturated before the
 *       overload guard has seen enough calls to judge.</li>
 * </ul>
 */
final class Hedging {
    /** Latencies recorded between two readings of the percentile. */
    private static final int REFRESH_EVERY = 32;
    /** Credit a winning hedge earns back (a hedge spends one). */
    static final long WIN_CREDIT = 4;
    /** Most credit kept. */
    static final long MAX_CREDIT = 20;
    /** The credit a new retry starts with: one win's worth. */
    static final long INITIAL_CREDIT = WIN_CREDIT;
    /**
     * Time in which one credit comes back without wins: ten seconds. Each credit that comes back
     * while hedges lose is a hedge into a saturated server (at 1.05x capacity, one a second cost
     * the calls' median 25 % in the hedge harness; one in ten seconds, 1-2 %), and hedging resumes
     * within ten seconds of an overload's end (a winning hedge earns four).
     */
    static final long REFILL_NANOS = 10_000_000_000L;

    final HedgePolicy policy;
    private final Clock clock;
    private final AtomicLong credit = new AtomicLong(INITIAL_CREDIT);
    private final AtomicLong refilledAt;
    /** The recent latencies for a percentile delay; null for a fixed delay. */
    private final @Nullable LatencyHistogram latencies;
    /** The percentile delay last read, or -1 while warming up. */
    private volatile long cachedNanos = -1;
    private final AtomicLong untilRefresh = new AtomicLong();
    /** Recent first attempts and how many outlived the delay; null when the overload guard is off. */
    private final @Nullable SlowShare slowShare;
    private final double maxSlowShare;
    private final boolean timesAttempts;
    /** Hedges refused by the overload guard or the credit. */
    private final LongAdder refusals = new LongAdder();

    Hedging(HedgePolicy policy, Clock clock) {
        this.policy = policy;
        this.clock = clock;
        this.refilledAt = new AtomicLong(clock.coarseNanoTime());
        this.latencies = policy.percentile().isPresent() ? new LatencyHistogram(clock, policy.windowNanos()) : null;
        this.maxSlowShare = policy.maxSlowShare().orElse(1);
        this.slowShare = policy.maxSlowShare().isPresent() ? new SlowShare(clock) : null;
        this.timesAttempts = latencies != null || slowShare != null; // one field read on the happy path
    }

    /** Whether a first attempt answered in time is recorded ({@link #observed}): a percentile delay, or the overload guard. */
    boolean timesAttempts() {
        return timesAttempts;
    }

    /** The wait before the next hedge of a call starting now. */
    long delayNanos() {
        if (latencies == null) {
            return policy.delayNanos();
        }
        long cached = cachedNanos;
        return cached < 0 ? policy.delayNanos() : cached;
    }

    /**
     * A round's first attempt took {@code nanos} and answered before its delay passed: counted by
     * the overload guard as in time, and recorded as {@link #observedLate} records it.
     */
    void observed(long nanos) {
        SlowShare share = slowShare;
        if (share != null) {
            share.answeredInTime();
        }
        observedLate(nanos);
    }

    /**
     * A round's first attempt took {@code nanos}: an accepted one, or a loser cancelled after that
     * long (its true latency is at least that; counting it keeps the slow tail in the histogram,
     * which the winners alone would hide). Its delay had passed ({@link #delayPassed()} counted it),
     * or it is counted by {@link #observed}. Every {@value #REFRESH_EVERY} latencies, one caller
     * re-reads the percentile.
     */
    void observedLate(long nanos) {
        LatencyHistogram h = latencies;
        if (h == null) {
            return;
        }
        h.record(nanos);
        if (cachedNanos >= 0 && untilRefresh.decrementAndGet() > 0) { // while warming up, every latency may end it
            return;
        }
        untilRefresh.set(REFRESH_EVERY);
        refresh();
    }

    /** Reads the percentile now (the fixed delay until the warm-up is over), never below the floor. */
    void refresh() {
        LatencyHistogram h = latencies;
        if (h == null) {
            return;
        }
        if (h.count() < policy.warmup()) {
            cachedNanos = -1;
            return;
        }
        long p = h.percentile(policy.percentile().getAsDouble());
        cachedNanos = p < 0 ? -1 : Math.max(policy.floorNanos(), p);
    }

    /** The delay of a round's first attempt passed while it ran: counted by the overload guard. */
    void delayPassed() {
        SlowShare share = slowShare;
        if (share != null) {
            share.outlivedDelay();
        }
    }

    /**
     * Asks to send one hedge: refused while the slowness is everyone's (the overload guard) or
     * while hedges have been losing (the credit, then taken); see the class comment. Each refusal
     * is counted ({@link #refusals()}).
     */
    boolean tryHedge() {
        SlowShare share = slowShare;
        if (share != null && share.above(maxSlowShare)) {
            refusals.increment();
            return false;
        }
        refill();
        long c;
        do {
            c = credit.get();
            if (c < 1) {
                refusals.increment();
                return false;
            }
        } while (!credit.compareAndSet(c, c - 1));
        return true;
    }

    /** Hedges this hedging refused itself since it was made: by the overload guard or for want of credit. */
    long refusals() {
        return refusals.sum();
    }

    /** A hedge won: it earns back {@value #WIN_CREDIT} credits, up to {@value #MAX_CREDIT}. */
    void hedgeWon() {
        add(WIN_CREDIT);
    }

    /** Hedge credits left now. */
    long credit() {
        refill();
        return credit.get();
    }

    private void refill() {
        long now = clock.coarseNanoTime();
        long at = refilledAt.get();
        long gained = (now - at) / REFILL_NANOS;
        if (gained > 0 && refilledAt.compareAndSet(at, at + gained * REFILL_NANOS)) {
            add(gained);
        }
    }

    private void add(long n) {
        long c;
        do {
            c = credit.get();
        } while (c < MAX_CREDIT && !credit.compareAndSet(c, Math.min(MAX_CREDIT, c + n)));
    }

    @Nullable LatencyHistogram latencies() {
        return latencies;
    }
}
