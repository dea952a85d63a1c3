package dev.stagger;

import dev.stagger.internal.Checks;
import java.time.Duration;
import java.util.Optional;
import java.util.OptionalDouble;
import java.util.concurrent.Executor;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;

/**
 * When a call sends extra attempts while its first is still running: hedged requests, for a
 * tail of slow answers rather than failures. Part of a {@link RetryPolicy}
 * ({@link RetryPolicy.Builder#hedge(HedgePolicy)}); immutable.
 *
 * <p><b>What a hedged call does.</b> It starts an attempt; if no attempt has answered after the
 * hedge delay, it sends another, up to {@link #maxHedges()} more, one delay apart. The first
 * outcome the policy's classifier <em>accepts</em> wins and the attempts still running are
 * cancelled (a sync attempt's thread is interrupted, an async attempt's future cancelled) and
 * their late results handed to {@link Builder#onDiscard(Consumer)} so resources such as HTTP
 * bodies are released. A failure the classifier does not retry ends the call at once, as it ends a
 * retrying call. A retryable failure ends that attempt only: the others keep running. When no
 * attempt is left running and none succeeded, the {@link RetryEngine} decides as after any failed
 * attempt: back off and start again (with hedges), or end (attempts exhausted, deadline).
 *
 * <p><b>Hedges are attempts.</b> Each counts against the policy's {@code maxAttempts}, spends one
 * token of the retry's {@link RetryBudget} as a retry does (gRPC's rule), and is sent only while
 * the {@link CircuitBreaker} grants a permit, the {@link AdaptiveThrottle} admits it, and the
 * remaining deadline is longer than the delay. A hedge any of them refuses is not sent, and the
 * call goes on with the attempts it has: a hedge never ends a call by being refused.
 *
 * <p><b>The delay.</b> {@link Builder#delay(Duration)} fixes it. With
 * {@link Builder#percentile(double)} it is that percentile of the retry's recent attempt latencies
 * (accepted attempts, and losers counted at the time they were cancelled, which they took at
 * least; a small lock-free histogram over the last {@link Builder#window(Duration) window}, within
 * 12.5 % above the true value), never below {@link Builder#floor(Duration) floor}, and the
 * fixed delay until {@link Builder#warmup(int) warmup} latencies have been seen. Hedging after the
 * 95th percentile keeps extra load near 5 % ("The Tail at Scale", Dean and Barroso, 2013).
 * {@link Retry#hedgeDelay()} reads the delay a call would use now.
 */
public final class HedgePolicy {
    /** gRPC caps a hedging policy at 5 attempts in all: 4 hedges besides the first. */
    public static final int MAX_HEDGES = 4;

    private final long delayNanos;
    private final double percentile;
    private final long floorNanos;
    private final int warmup;
    private final long windowNanos;
    private final int maxHedges;
    private final @Nullable Executor executor;
    private final @Nullable Consumer<Object> onDiscard;

    private HedgePolicy(Builder b) {
        this.delayNanos = Checks.nanos(b.delay);
        this.percentile = b.percentile;
        this.floorNanos = Checks.nanos(b.floor);
        this.warmup = b.warmup;
        this.windowNanos = Checks.nanos(b.window);
        this.maxHedges = b.maxHedges;
        this.executor = b.executor;
        this.onDiscard = b.onDiscard;
    }

    /** One hedge after a fixed {@code delay}. */
    public static HedgePolicy after(Duration delay) {
        return builder().delay(delay).build();
    }

    public static Builder builder() {
        return new Builder();
    }

    /** The fixed delay, and the delay during the warm-up of a percentile delay. */
    public Duration delay() {
        return Duration.ofNanos(delayNanos);
    }

    /** The percentile of recent latencies the delay follows, if any. */
    public OptionalDouble percentile() {
        return percentile > 0 ? OptionalDouble.of(percentile) : OptionalDouble.empty();
    }

    /** The least delay a percentile may give. */
    public Duration floor() {
        return Duration.ofNanos(floorNanos);
    }

    /** Latencies seen before the percentile replaces the fixed delay. */
    public int warmup() {
        return warmup;
    }

    /** How far back the latencies the percentile reads go. */
    public Duration window() {
        return Duration.ofNanos(windowNanos);
    }

    /** Extra attempts a call may send besides the first of each round (1 to {@value #MAX_HEDGES}). */
    public int maxHedges() {
        return maxHedges;
    }

    long delayNanos() {
        return delayNanos;
    }

    long floorNanos() {
        return floorNanos;
    }

    long windowNanos() {
        return windowNanos;
    }

    /** The hook given results nobody will receive, if one was set ({@link Builder#onDiscard(Consumer)}). */
    public Optional<Consumer<Object>> onDiscard() {
        return Optional.ofNullable(onDiscard);
    }

    /**
     * A builder holding this policy's settings, to build a changed copy (an integration adds its
     * own {@link Builder#onDiscard(Consumer) onDiscard}, calling this one's from it).
     */
    public Builder toBuilder() {
        Builder b = new Builder();
        b.delay = delay();
        b.percentile = percentile;
        b.floor = floor();
        b.warmup = warmup;
        b.window = window();
        b.maxHedges = maxHedges;
        b.executor = executor;
        b.onDiscard = onDiscard;
        return b;
    }

    /** The executor sync attempts run on: the one given, else {@link HedgeThreads#DEFAULT}. */
    Executor executor() {
        return executor != null ? executor : HedgeThreads.DEFAULT;
    }

    /** Hands a result nobody will receive (a losing or late attempt's) to the discard hook. */
    void discard(@Nullable Object result) {
        Consumer<Object> hook = onDiscard;
        if (hook != null && result != null) {
            try {
                hook.accept(result);
            } catch (RuntimeException ignored) {
                // releasing a loser must not change the call's outcome
            }
        }
    }

    @Override
    public String toString() {
        return "HedgePolicy{maxHedges=" + maxHedges + ", delay=" + delay()
                + (percentile > 0 ? ", percentile=" + percentile + ", floor=" + floor() + ", warmup=" + warmup : "")
                + "}";
    }

    /** Builds a {@link HedgePolicy}. Not thread-safe. */
    public static final class Builder {
        private Duration delay;
        private double percentile;
        private Duration floor = Duration.ofMillis(1);
        private int warmup = 100;
        private Duration window = Duration.ofSeconds(30);
        private int maxHedges = 1;
        private Executor executor;
        private Consumer<Object> onDiscard;

        private Builder() {
        }

        /** The fixed delay before each hedge; with a percentile, the delay until the warm-up is over. Required. */
        public Builder delay(Duration delay) {
            this.delay = Checks.nonNegative("delay", delay);
            return this;
        }

        /**
         * Hedges after this percentile (above 0, below 100) of the retry's recent attempt
         * latencies instead of the fixed delay: 95 sends hedges for about the slowest 5 %.
         */
        public Builder percentile(double percentile) {
            this.percentile = Checks.inside("percentile", percentile, 0, 100);
            return this;
        }

        /** The least delay a percentile may give; default 1 ms. */
        public Builder floor(Duration floor) {
            this.floor = Checks.nonNegative("floor", floor);
            return this;
        }

        /** Latencies to see before a percentile is trusted; the fixed delay is used until then. Default 100. */
        public Builder warmup(int samples) {
            this.warmup = Checks.atLeast("warmup", samples, 1);
            return this;
        }

        /** How far back the latencies go (the last half of it to all of it); default 30 s. */
        public Builder window(Duration window) {
            this.window = Checks.positive("window", window);
            return this;
        }

        /** Extra attempts per round besides the first, 1 to {@value HedgePolicy#MAX_HEDGES}; default 1. */
        public Builder maxHedges(int maxHedges) {
            Checks.atLeast("maxHedges", maxHedges, 1);
            this.maxHedges = Checks.atMost("maxHedges", maxHedges, MAX_HEDGES);
            return this;
        }

        /**
         * Where {@link Retry#call} runs its attempts (each attempt runs on it, the caller's thread
         * waits). Default: a shared pool of daemon platform threads, made as needed and dropped
         * after 30 s idle. On Java 21 and later, {@code Executors.newVirtualThreadPerTaskExecutor()}
         * is the better choice: an attempt blocked on I/O then holds no platform thread.
         */
        public Builder executor(Executor executor) {
            this.executor = Checks.notNull("executor", executor);
            return this;
        }

        /**
         * Called with each result that nobody will receive: an attempt that answered after another
         * won, or after the call ended. An integration closes it there (an HTTP response's body).
         * Runs on the thread the result arrived on; a {@link RuntimeException} from it is ignored.
         */
        public Builder onDiscard(Consumer<Object> onDiscard) {
            this.onDiscard = Checks.notNull("onDiscard", onDiscard);
            return this;
        }

        public HedgePolicy build() {
            if (delay == null) {
                throw new IllegalArgumentException("delay must be set (the fixed delay, or the warm-up delay of a percentile)");
            }
            return new HedgePolicy(this);
        }
    }
}
