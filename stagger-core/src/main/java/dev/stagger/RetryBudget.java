package dev.stagger;

import dev.stagger.internal.Checks;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

/**
 * A token bucket, shared by every call to one downstream, that keeps retries a bounded share of
 * traffic, so a fleet-wide outage cannot multiply load (gRPC retry throttling; the SRE book's
 * "retries under 10 % of requests").
 *
 * <p>Each successful attempt deposits {@code ratio} tokens (default 0.1), up to
 * {@code maxTokens} (default 100; the bucket starts full). Each retry withdraws one token and is
 * refused when fewer than one is left — except that up to {@code minRetriesPerSecond} (default
 * 10) retries per second are always allowed, so a quiet service stays retryable. First attempts
 * are never refused. Under 100 % failure, retries over any period are therefore at most
 * {@code maxTokens + minRetriesPerSecond × seconds}; under a steady mix they are at most
 * {@code ratio × successes} plus that floor.
 *
 * <p>Thread-safe and lock-free. A deposit into a full bucket is one volatile read.
 */
public final class RetryBudget {
    private static final long MILLI = 1000;
    private static final int COUNT_BITS = 24;
    private static final long COUNT_MASK = (1L << COUNT_BITS) - 1;
    private static final double MAX_TOKENS = 1e15;

    private final String name;
    private final long depositMilli;
    private final long maxMilli;
    private final int minRetriesPerSecond;
    private final Clock clock;
    private final double ratio;

    private final AtomicLong tokensMilli;
    /** (second << 24) | retries allowed by the floor in that second. */
    private final AtomicLong floorWindow = new AtomicLong();
    private final LongAdder refusals = new LongAdder();
    private final LongAdder withdrawals = new LongAdder();

    private RetryBudget(Builder b) {
        this.name = b.name;
        this.ratio = b.ratio;
        this.depositMilli = Math.round(b.ratio * MILLI);
        this.maxMilli = Math.round(b.maxTokens * MILLI);
        this.minRetriesPerSecond = b.minRetriesPerSecond;
        this.clock = b.clock;
        this.tokensMilli = new AtomicLong(maxMilli);
    }

    public static Builder builder(String name) {
        return new Builder(name);
    }

    /** A budget with the defaults: ratio 0.1, 100 tokens, 10 retries per second floor. */
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
     * Asks to retry. Takes one token when there is one, or a place under the per-second floor.
     *
     * @return false when the retry is refused
     */
    public boolean tryAcquireRetry() {
        long current;
        do {
            current = tokensMilli.get();
            if (current < MILLI) {
                if (tryFloor()) {
                    withdrawals.increment();
                    return true;
                }
                refusals.increment();
                return false;
            }
        } while (!tokensMilli.compareAndSet(current, current - MILLI));
        withdrawals.increment();
        return true;
    }

    private boolean tryFloor() {
        if (minRetriesPerSecond == 0) {
            return false;
        }
        long second = Math.floorDiv(clock.coarseNanoTime(), 1_000_000_000L);
        while (true) {
            long packed = floorWindow.get();
            long packedSecond = packed >>> COUNT_BITS;
            long count = packed & COUNT_MASK;
            long wanted = (second & (-1L >>> COUNT_BITS)) << COUNT_BITS;
            if (packedSecond != (second & (-1L >>> COUNT_BITS))) {
                if (floorWindow.compareAndSet(packed, wanted | 1)) {
                    return true;
                }
            } else if (count < minRetriesPerSecond) {
                if (floorWindow.compareAndSet(packed, packed + 1)) {
                    return true;
                }
            } else {
                return false;
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

    public double ratio() {
        return ratio;
    }

    public int minRetriesPerSecond() {
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
        return "RetryBudget{" + name + ", tokens=" + tokens() + "/" + maxTokens() + ", ratio=" + ratio
                + ", minRetriesPerSecond=" + minRetriesPerSecond + "}";
    }

    /** Builds a {@link RetryBudget}. */
    public static final class Builder {
        private final String name;
        private double ratio = 0.1;
        private double maxTokens = 100;
        private int minRetriesPerSecond = 10;
        private Clock clock = Clock.system();

        private Builder(String name) {
            this.name = Checks.notNull("name", name);
        }

        /**
         * Tokens deposited per successful attempt, in [0.001, 1] (tokens are counted in thousandths,
         * so a smaller ratio would deposit nothing). Default 0.1: retries ≤ 10 % of successes.
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

        /** Retries always allowed per second, tokens or not; 0 for none. Default 10. */
        public Builder minRetriesPerSecond(int minRetriesPerSecond) {
            this.minRetriesPerSecond = Checks.atLeast("minRetriesPerSecond", minRetriesPerSecond, 0);
            if (minRetriesPerSecond > COUNT_MASK) {
                throw new IllegalArgumentException("minRetriesPerSecond must be at most " + COUNT_MASK + ", got "
                        + minRetriesPerSecond);
            }
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
