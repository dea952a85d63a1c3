package dev.stagger;

import dev.stagger.internal.AimdAlgorithm;
import dev.stagger.internal.Checks;
import dev.stagger.internal.LimitAlgorithm;
import java.time.Duration;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * A limit on how many calls to one downstream may be in flight at once, so a slow downstream ties
 * up a bounded share of this process's threads and connections instead of all of them (the
 * bulkhead of a ship: one flooded compartment does not sink it). A guard like the
 * {@link CircuitBreaker}, the {@link RetryBudget} and the {@link AdaptiveThrottle}: on a
 * {@link Retry} ({@link Retry#withBulkhead}) every attempt takes a permit before it runs and gives
 * it back when it ends, and a refusal ends the call with {@link EndReason#BULKHEAD_FULL} and a
 * {@link BulkheadFullException}, the last failure as its cause.
 *
 * <p><b>A permit per attempt.</b> A retry holds no permit while it waits for its next attempt:
 * a call backing off for seconds does not keep a slot from calls that could run, and each retry
 * queues for a permit again like any other attempt. A refusal is not a failure of the operation:
 * it is not retried (retrying it would be waiting for a permit, which is what {@code maxWait} is
 * for).
 *
 * <p><b>Fixed or adaptive.</b> A fixed bulkhead allows {@link Builder#maxConcurrent} calls. An
 * adaptive one ({@link Builder#adaptive(Duration)}) starts there and follows the downstream with
 * additive increase, multiplicative decrease (TCP Reno's rule, the same algorithm as the
 * {@code AimdLimit} of stagger-shedding's server-side limit): an attempt slower than the latency
 * threshold, or one whose failure the classifier wants to retry (a timeout, a 503: the downstream
 * pushing back), multiplies the limit by 0.9, once per round trip; a fast attempt while at least
 * half of the limit was in use adds {@code 1 / limit}. The limit stays within
 * [{@link Builder#minConcurrent}, {@link Builder#maxConcurrent}].
 *
 * <p><b>Waiting.</b> Without {@link Builder#maxWait} (the default) a full bulkhead refuses at once.
 * With one, a caller queues, first come first served, for up to that long on the bulkhead's
 * {@link Clock}: a sync call blocks without holding a lock (virtual threads unmount), an async call
 * waits without blocking any thread. A permit given back goes to the first caller in the queue.
 *
 * <p><b>Concurrency.</b> Immutable configuration and thread-safe state, shared by every retry it is
 * given to. Taking a permit while nobody waits is one compare-and-set and allocates nothing for a
 * fixed bulkhead; the in-flight count never exceeds the limit read as the permit was taken (a limit
 * lowered meanwhile lets what is in flight finish). The queue is guarded by a
 * {@code ReentrantLock} never held across a wait. {@link #refusals()} is a {@code LongAdder} total,
 * exact when the bulkhead is quiescent.
 */
public final class Bulkhead {
    private final String name;
    private final int maxConcurrent;
    private final int minConcurrent;
    private final Duration maxWait;
    private final long maxWaitNanos;
    private final @Nullable Duration latencyThreshold;
    private final Clock clock;
    final BulkheadPermits permits;

    private Bulkhead(Builder b) {
        this.name = b.name;
        this.maxConcurrent = b.maxConcurrent;
        this.minConcurrent = b.minConcurrent;
        this.maxWait = b.maxWait;
        this.maxWaitNanos = Checks.nanos(b.maxWait);
        this.latencyThreshold = b.latencyThreshold;
        this.clock = b.clock;
        LimitAlgorithm algorithm = latencyThreshold == null ? LimitAlgorithm.fixed(maxConcurrent)
                : new AimdAlgorithm(Checks.nanos(latencyThreshold), maxConcurrent, minConcurrent, maxConcurrent, 0.9);
        this.permits = new BulkheadPermits(this, algorithm, latencyThreshold != null);
    }

    /** A bulkhead called {@code name}, to configure; fixed at 25 calls in flight, refusing at once when full. */
    public static Builder builder(String name) {
        return new Builder(Checks.notNull("name", name));
    }

    /** A fixed bulkhead of {@code maxConcurrent} calls in flight that refuses at once when full. */
    public static Bulkhead of(String name, int maxConcurrent) {
        return builder(name).maxConcurrent(maxConcurrent).build();
    }

    /** A builder with this bulkhead's configuration; what it builds has fresh state (no call in flight). */
    public Builder toBuilder() {
        Builder b = new Builder(name).maxConcurrent(maxConcurrent).minConcurrent(minConcurrent).maxWait(maxWait)
                .clock(clock);
        if (latencyThreshold != null) {
            b.adaptive(latencyThreshold);
        }
        return b;
    }

    public String name() {
        return name;
    }

    /** The most calls in flight at once: the limit of a fixed bulkhead, the ceiling of an adaptive one. */
    public int maxConcurrent() {
        return maxConcurrent;
    }

    /** The floor of an adaptive bulkhead's limit (1 unless set); unused by a fixed one. */
    public int minConcurrent() {
        return minConcurrent;
    }

    /** How long a caller may wait for a permit; zero: a full bulkhead refuses at once. */
    public Duration maxWait() {
        return maxWait;
    }

    /** The latency above which an adaptive bulkhead lowers its limit; empty for a fixed bulkhead. */
    public Optional<Duration> latencyThreshold() {
        return Optional.ofNullable(latencyThreshold);
    }

    /** Whether the limit adapts to the downstream ({@link Builder#adaptive(Duration)}). */
    public boolean isAdaptive() {
        return latencyThreshold != null;
    }

    public Clock clock() {
        return clock;
    }

    /** The limit now: {@link #maxConcurrent()} for a fixed bulkhead. A volatile read. */
    public int limit() {
        return permits.limit();
    }

    /** Permits held now. */
    public int inFlight() {
        return permits.inFlight();
    }

    /** Callers waiting for a permit now. */
    public int waiting() {
        return permits.waiting();
    }

    /** Attempts refused since the bulkhead was built. */
    public long refusals() {
        return permits.refusals();
    }

    long maxWaitNanos() {
        return maxWaitNanos;
    }

    @Override
    public String toString() {
        return "Bulkhead{" + name + ", " + (latencyThreshold == null ? "maxConcurrent=" + maxConcurrent
                : "adaptive " + minConcurrent + ".." + maxConcurrent + " over " + latencyThreshold)
                + (maxWaitNanos > 0 ? ", maxWait=" + maxWait : "") + "}";
    }

    /** Configures a {@link Bulkhead}; {@link #build()} validates and snapshots. Not thread-safe. */
    public static final class Builder {
        private final String name;
        private int maxConcurrent = 25;
        private int minConcurrent = 1;
        private Duration maxWait = Duration.ZERO;
        private @Nullable Duration latencyThreshold;
        private Clock clock = Clock.system();

        private Builder(String name) {
            this.name = name;
        }

        /** The most calls in flight at once (the ceiling when adaptive); at least 1. Default 25. */
        public Builder maxConcurrent(int maxConcurrent) {
            this.maxConcurrent = Checks.atLeast("maxConcurrent", maxConcurrent, 1);
            return this;
        }

        /** The lowest an adaptive limit goes; at least 1, at most {@code maxConcurrent}. Default 1. */
        public Builder minConcurrent(int minConcurrent) {
            this.minConcurrent = Checks.atLeast("minConcurrent", minConcurrent, 1);
            return this;
        }

        /**
         * How long a caller may wait for a permit when the bulkhead is full, on the clock; zero or
         * more. Default zero: refuse at once. Keep it short: a caller waiting here is what the
         * bulkhead exists to bound.
         */
        public Builder maxWait(Duration maxWait) {
            this.maxWait = Checks.nonNegative("maxWait", maxWait);
            return this;
        }

        /**
         * Makes the limit adaptive: lowered by attempts slower than {@code latencyThreshold} and by
         * failures the classifier retries, raised again by fast attempts (see the class comment).
         * Set the threshold to a latency you are willing to wait for (say twice the usual), not to a
         * timeout.
         */
        public Builder adaptive(Duration latencyThreshold) {
            this.latencyThreshold = Checks.positive("latencyThreshold", latencyThreshold);
            return this;
        }

        /** Time for waits and for the adaptive limit's latencies; {@link dev.stagger.testing.VirtualClock} in tests. */
        public Builder clock(Clock clock) {
            this.clock = Checks.notNull("clock", clock);
            return this;
        }

        /** @throws IllegalArgumentException when {@code minConcurrent} is above {@code maxConcurrent} */
        public Bulkhead build() {
            Checks.notBelow("maxConcurrent", maxConcurrent, "minConcurrent", minConcurrent);
            return new Bulkhead(this);
        }
    }
}
