package dev.stagger;

import java.util.concurrent.atomic.AtomicLong;
import org.jspecify.annotations.Nullable;

/**
 * A {@link Retry}'s hedging at run time: its {@link HedgePolicy}, the recent latencies a
 * percentile delay reads, and the hedges' credit. Shared by the copies a {@code with...} method
 * makes on the same clock. Thread-safe and lock-free.
 *
 * <p><b>Hedges pay for themselves.</b> A hedge helps only when the slowness it backs up is the
 * attempt's own (a slow replica, a lost packet, a pause); when every attempt is slow for the same
 * reason (a saturated server, a queue) the hedge waits behind the first and only adds load. So a
 * hedge spends one credit and a hedge that wins earns {@value #WIN_CREDIT}: hedging goes on while
 * at least one hedge in {@value #WIN_CREDIT} wins, and stops when hedges keep losing. Credit starts
 * full ({@value #MAX_CREDIT}, the burst allowed while nothing is known) and comes back at one a
 * second, so hedging is tried again after an overload has passed.
 */
final class Hedging {
    /** Latencies recorded between two readings of the percentile. */
    private static final int REFRESH_EVERY = 32;
    /** Credit a winning hedge earns back (a hedge spends one). */
    static final long WIN_CREDIT = 4;
    /** Most credit kept, and the credit a new retry starts with. */
    static final long MAX_CREDIT = 20;
    /** Time in which one credit comes back without wins. */
    static final long REFILL_NANOS = 1_000_000_000L;

    final HedgePolicy policy;
    private final Clock clock;
    private final AtomicLong credit = new AtomicLong(MAX_CREDIT);
    private final AtomicLong refilledAt;
    /** The recent latencies for a percentile delay; null for a fixed delay. */
    private final @Nullable LatencyHistogram latencies;
    /** The percentile delay last read, or -1 while warming up. */
    private volatile long cachedNanos = -1;
    private final AtomicLong untilRefresh = new AtomicLong();

    Hedging(HedgePolicy policy, Clock clock) {
        this.policy = policy;
        this.clock = clock;
        this.refilledAt = new AtomicLong(clock.coarseNanoTime());
        this.latencies = policy.percentile().isPresent() ? new LatencyHistogram(clock, policy.windowNanos()) : null;
    }

    /** Whether attempts' latencies are recorded (a percentile delay). */
    boolean timesAttempts() {
        return latencies != null;
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
     * An attempt took {@code nanos}: an accepted one, or a loser cancelled after that long (its true
     * latency is at least that; counting it keeps the slow tail in the histogram, which the winners
     * alone would hide). Every {@value #REFRESH_EVERY} latencies, one caller re-reads the percentile.
     */
    void observed(long nanos) {
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

    /** Takes the credit for one hedge; false when hedges have been losing (see the class comment). */
    boolean tryHedge() {
        refill();
        long c;
        do {
            c = credit.get();
            if (c < 1) {
                return false;
            }
        } while (!credit.compareAndSet(c, c - 1));
        return true;
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
