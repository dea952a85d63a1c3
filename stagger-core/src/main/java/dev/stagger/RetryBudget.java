package dev.stagger;

import dev.stagger.internal.Checks;
import java.math.BigDecimal;
import java.math.RoundingMode;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

/**
 * A token bucket, shared by every call to one downstream, that keeps retries a bounded share of
 * traffic, so a fleet-wide outage cannot multiply load (the SRE book's "retries under 10 % of
 * requests", in the spirit of Finagle's retry budget).
 *
 * <p>Each successful attempt deposits {@code ratio} tokens (default 0.1, rounded down to a
 * multiple of 0.001), up to {@code maxTokens} (default 100; the bucket starts full). Each retry
 * withdraws one token. When fewer than one is left, the retry may still be taken from the
 * <b>floor</b>: an allowance refilled continuously at {@code minRetriesPerSecond} (default 10) and
 * holding at most {@code ceil(minRetriesPerSecond)} (at least 1) retries, so a quiet service stays
 * retryable. Otherwise the retry is refused. First attempts are never refused.
 *
 * <p><b>The bound.</b> Over any interval of {@code T} seconds of the budget's clock,
 * <pre>
 *   retries granted  &le;  L + ratio &times; S + ceil(r) + r &times; T
 * </pre>
 * where {@code L <= maxTokens} is the bucket's level at the start of the interval, {@code S} the
 * successes recorded during it and {@code r = minRetriesPerSecond} (exactly: the floor grants at
 * most {@code ceil(r) + floor(T / ceil(1e9 / r ns))}). Under 100 % failure there are no deposits:
 * at most {@code maxTokens + ceil(r) + r × T} retries in any {@code T} seconds, and in the long
 * run {@code r} per second. With {@code A} attempts per call and {@code λ} calls per second all
 * failing, the load is therefore about {@code λ × (1 + min(A - 1, r / λ))}: 1.01× the offered rate
 * at 1,000 calls/s with the default floor, 1.1× at 100/s, 2× at 10/s, and 3× (every retry) at 2/s
 * with 3 attempts. A low-traffic caller that wants the 10 % share to hold sets the floor to about a
 * tenth of its call rate ({@code minRetriesPerSecond(0.2)} at 2 calls/s), or 0 for none.
 *
 * <p><b>Not gRPC retry throttling.</b> gRFC A6's throttle counts failures against successes and
 * turns retries off entirely while its counter is at or below half of {@code maxTokens}; this
 * budget never turns them off (the floor), and charges only retries, not failed first attempts.
 * Finagle's budget is the model, with two differences: its deposits expire after a time-to-live
 * (10 s) while these stay until spent, and its floor is a per-second reserve where this one is a
 * continuously refilled allowance, so the bound above holds over every interval, not only over
 * whole seconds.
 *
 * <p><b>Concurrency.</b> Thread-safe and lock-free; neither method allocates. {@link #onSuccess()}
 * and {@link #tryAcquireRetry()} are linearizable: a deposit and a withdrawal are each one
 * compare-and-set of the token count, and a retry taken from (or refused by) the floor is decided
 * on one consistent reading of the token count, the floor and the clock, the floor's state only
 * moving forward. A deposit into a full bucket is one volatile read. {@link #tokens()} is exact;
 * {@link #refusals()} and {@link #retriesAllowed()} are {@link LongAdder} totals, exact when the
 * budget is quiescent and otherwise missing at most the calls in flight.
 */
public final class RetryBudget {
    private static final long MILLI = 1000;
    private static final double MAX_TOKENS = 1e15;
    private static final double MAX_FLOOR_RATE = 1_000_000;
    private static final double NANOS_PER_SECOND = 1e9;
    private static final java.util.concurrent.ConcurrentMap<String, RetryBudget> SHARED =
            new java.util.concurrent.ConcurrentHashMap<>();

    private final String name;
    private final long depositMilli;
    private final long maxMilli;
    private final double minRetriesPerSecond;
    /** Nanoseconds per floor retry, rounded up (so the floor never exceeds its rate); 0 when there is no floor. */
    private final long floorIntervalNanos;
    /** The floor's capacity in nanoseconds: ceil(rate) retries' worth. */
    private final long floorCapacityNanos;
    private final Clock clock;

    private final AtomicLong tokensMilli;
    /**
     * The floor as a virtual schedule (the generic cell rate algorithm): the time at which it
     * would be empty again. A retry is granted from it when that time, moved one interval on, is
     * at most its capacity ahead of now. Only ever moves forward.
     */
    private final AtomicLong floorBusyUntil;
    private final LongAdder refusals = new LongAdder();
    private final LongAdder withdrawals = new LongAdder();

    private RetryBudget(Builder b) {
        this.name = b.name;
        this.depositMilli = BigDecimal.valueOf(b.ratio).movePointRight(3).setScale(0, RoundingMode.FLOOR)
                .longValueExact();
        this.maxMilli = Math.round(b.maxTokens * MILLI);
        this.minRetriesPerSecond = b.minRetriesPerSecond;
        this.clock = b.clock;
        if (b.minRetriesPerSecond > 0) {
            this.floorIntervalNanos = (long) Math.ceil(NANOS_PER_SECOND / b.minRetriesPerSecond);
            this.floorCapacityNanos = Math.max(1, (long) Math.ceil(b.minRetriesPerSecond)) * floorIntervalNanos;
        } else {
            this.floorIntervalNanos = 0;
            this.floorCapacityNanos = 0;
        }
        this.tokensMilli = new AtomicLong(maxMilli);
        this.floorBusyUntil = new AtomicLong(clock.coarseNanoTime()); // full from the start
    }

    public static Builder builder(String name) {
        return new Builder(name);
    }

    /**
     * The process's default budget for retries called {@code name}, on the system clock, with the
     * defaults above (ratio 0.1, 100 tokens, a floor of 10 retries per second): made on first use,
     * then the same instance for every caller. {@link Retry#of} gives each retry the one of its
     * name, so every {@code Retry} has a budget unless {@link Retry#withoutBudget()} says otherwise,
     * and retries that share a name (one downstream, one operation) share it.
     */
    public static RetryBudget shared(String name) {
        RetryBudget b = SHARED.get(Checks.notNull("name", name));
        return b != null ? b : SHARED.computeIfAbsent(name, n -> builder(n).build());
    }

    /** A new budget with the defaults: ratio 0.1, 100 tokens, a floor of 10 retries per second. */
    public static RetryBudget of(String name) {
        return builder(name).build();
    }

    public String name() {
        return name;
    }

    /** Records a successful attempt: deposits {@code ratio} tokens. */
    public void onSuccess() {
        if (tokensMilli.get() >= maxMilli) {
            return; // full: stay read-only so healthy traffic does not contend on the counter
        }
        long current;
        do {
            current = tokensMilli.get();
            if (current >= maxMilli) {
                return;
            }
        } while (!tokensMilli.compareAndSet(current, Math.min(maxMilli, current + depositMilli)));
    }

    /**
     * Asks to retry. Takes one token when there is one, or else one retry's worth of the floor.
     *
     * @return false when the retry is refused
     */
    public boolean tryAcquireRetry() {
        while (true) {
            long tokens = tokensMilli.get();
            if (tokens >= MILLI) {
                if (tokensMilli.compareAndSet(tokens, tokens - MILLI)) {
                    withdrawals.increment();
                    return true;
                }
                continue;
            }
            if (floorIntervalNanos == 0) {
                refusals.increment();
                return false;
            }
            // One consistent reading: the floor, then the clock, then the tokens (the moment the
            // decision is made), then the clock again; the floor is checked unchanged at the end.
            long busyUntil = floorBusyUntil.get();
            long now = clock.coarseNanoTime();
            if (tokensMilli.get() >= MILLI) {
                continue; // a deposit came in: take a token instead
            }
            if (clock.coarseNanoTime() != now) {
                continue;
            }
            long next = (busyUntil - now > 0 ? busyUntil : now) + floorIntervalNanos;
            if (next - now > floorCapacityNanos) {
                if (floorBusyUntil.get() != busyUntil) {
                    continue;
                }
                refusals.increment();
                return false;
            }
            if (floorBusyUntil.compareAndSet(busyUntil, next)) {
                withdrawals.increment();
                return true;
            }
        }
    }

    /** Tokens in the bucket now. */
    public double tokens() {
        return tokensMilli.get() / (double) MILLI;
    }

    public double maxTokens() {
        return maxMilli / (double) MILLI;
    }

    /** Tokens deposited per success, as used (rounded down to a multiple of 0.001). */
    public double ratio() {
        return depositMilli / (double) MILLI;
    }

    /** The floor's refill rate, in retries per second; 0 when there is no floor. */
    public double minRetriesPerSecond() {
        return minRetriesPerSecond;
    }

    /** Retries refused since creation. */
    public long refusals() {
        return refusals.sum();
    }

    /** Retries allowed since creation. */
    public long retriesAllowed() {
        return withdrawals.sum();
    }

    @Override
    public String toString() {
        return "RetryBudget{" + name + ", tokens=" + tokens() + "/" + maxTokens() + ", ratio=" + ratio()
                + ", minRetriesPerSecond=" + minRetriesPerSecond + "}";
    }

    /** Builds a {@link RetryBudget}. */
    public static final class Builder {
        private final String name;
        private double ratio = 0.1;
        private double maxTokens = 100;
        private double minRetriesPerSecond = 10;
        private Clock clock = Clock.system();

        private Builder(String name) {
            this.name = Checks.notNull("name", name);
        }

        /**
         * Tokens deposited per successful attempt, in [0.001, 1], rounded down to a multiple of
         * 0.001 (tokens are counted in thousandths). Default 0.1: retries ≤ 10 % of successes.
         */
        public Builder ratio(double ratio) {
            if (!(ratio >= 1.0 / MILLI && ratio <= 1)) {
                throw new IllegalArgumentException("ratio must be in [0.001, 1], got " + ratio);
            }
            this.ratio = ratio;
            return this;
        }

        /**
         * Bucket capacity, also its initial level; from 1 to 1e15 (tokens are counted in
         * thousandths in a {@code long}, and deposits near a larger ceiling would overflow it).
         * Default 100.
         */
        public Builder maxTokens(double maxTokens) {
            Checks.atLeast("maxTokens", maxTokens, 1.0);
            if (maxTokens > MAX_TOKENS) {
                throw new IllegalArgumentException("maxTokens must be at most 1e15, got " + maxTokens);
            }
            this.maxTokens = maxTokens;
            return this;
        }

        /**
         * The floor: retries allowed per second whatever the tokens, refilled continuously and
         * holding at most {@code ceil(rate)} (at least one) at a time. 0 for none; otherwise from
         * 0.001 to 1,000,000. Default 10. Low-traffic callers set about a tenth of their call rate
         * (0.2 at 2 calls per second) to keep retries near 10 % of traffic during an outage.
         */
        public Builder minRetriesPerSecond(double minRetriesPerSecond) {
            if (!(minRetriesPerSecond == 0
                    || minRetriesPerSecond >= 1.0 / MILLI && minRetriesPerSecond <= MAX_FLOOR_RATE)) {
                throw new IllegalArgumentException("minRetriesPerSecond must be 0 or in [0.001, 1000000], got "
                        + minRetriesPerSecond);
            }
            this.minRetriesPerSecond = minRetriesPerSecond;
            return this;
        }

        public Builder clock(Clock clock) {
            this.clock = Checks.notNull("clock", clock);
            return this;
        }

        public RetryBudget build() {
            return new RetryBudget(this);
        }
    }
}
