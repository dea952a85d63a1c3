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
 * <p><b>Hedges pay for themselves.</b> A hedge helps when the slowness belongs to one attempt; when
 * every attempt is slow for one reason (a saturated server, a queue) it waits behind the attempt it
 * backs up and only adds load. Two guards of each {@link Retry} refuse hedges then:
 * <ul>
 *   <li><b>Overload.</b> With a delay at the p-th percentile, about (100 &minus; p) % of first
 *       attempts outlive it. When, over about the last second, more than
 *       {@link #maxSlowShare()} of them did (twice the expected share by default: 10 % at p95),
 *       by more than chance (two standard deviations of that share's count, and at least 20
 *       first attempts seen, so a few slow calls on a quiet service are still a tail), every
 *       attempt is slow, and no hedge is sent until the share falls again. A fixed
 *       delay says nothing of how many calls should outlive it, so this guard is off for one
 *       unless {@link Builder#maxSlowShare(double)} sets the share; it then costs each call
 *       answered before the delay one compare-and-set.</li>
 *   <li><b>Credit.</b> A hedge spends one credit, a hedge that wins earns four, at most 20 are
 *       kept and one comes back every ten seconds; a new retry starts with four. Hedging goes on while
 *       at least one hedge in four wins, and pauses when hedges keep losing.</li>
 * </ul>
 * A hedge either guard refuses is not sent and the call goes on, as with the budget; the refusals
 * are counted ({@link Retry#hedgesRefused()}).
 *
 * <p><b>Sync calls: the first attempt runs on the caller's thread.</b> {@link Retry#call} runs a
 * call's first attempt where a plain retry runs it, so a call answered before the delay never
 * changes thread (and, when the retry needs nothing per attempt and no call in the process keeps
 * frames, allocates nothing: its timer is a deadline in the thread's own slot that one watcher
 * thread checks every millisecond; once any retry in the process has used a deadline, refused
 * nesting or opened a scope, a hedged call builds an execution, about 360 bytes). Hedges run
 * on the {@link Builder#executor(Executor) executor}. The price: when a hedge wins while the
 * caller's attempt still runs, the caller's thread is interrupted to end that attempt, and the
 * caller answers with the hedge's result once its attempt returns (the interrupt is then cleared).
 * An operation that ignores interrupts (a blocking socket read on a platform thread, most JDBC
 * drivers) holds the caller until it returns; the hedge's answer is still the one returned. The
 * alternative, every attempt on the executor, frees the caller at once but costs every call two
 * thread hand-offs for the few that hedge.
 *
 * <p><b>The delay.</b> {@link Builder#delay(Duration)} fixes it. With
 * {@link Builder#percentile(double)} it is that percentile of the retry's recent attempt latencies
 * (the first attempt of each round: its latency when it won, the time it had run when a hedge won
 * and it was cancelled; hedges' own latencies are left out, since they start a delay late and
 * would pull the percentile down; a small lock-free histogram over the last
 * {@link Builder#window(Duration) window}, within 12.5 % above the true value), never below
 * {@link Builder#floor(Duration) floor}, and the fixed delay until {@link Builder#warmup(int)
 * warmup} latencies have been seen. Hedging after the
 * 95th percentile keeps extra load near 5 % ("The Tail at Scale", Dean and Barroso, 2013).
 * {@link Retry#hedgeDelay()} reads the delay a call would use now.
 */
public final class HedgePolicy {
    /** gRPC caps a hedging policy at 5 attempts in all: 4 hedges besides the first. */
    public static final int MAX_HEDGES = 4;
    /**
     * With a percentile delay and no {@link Builder#maxSlowShare(double)}, the overload guard
     * trips when this many times the share expected to outlive the delay did.
     */
    public static final double SLOW_SHARE_FACTOR = 2;

    private final long delayNanos;
    private final double percentile;
    private final long floorNanos;
    private final int warmup;
    private final long windowNanos;
    private final int maxHedges;
    /** The overload guard's share, in (0, 1); 0 when the guard is off. */
    private final double maxSlowShare;
    private final @Nullable Double slowShareSet;
    private final @Nullable Executor executor;
    private final @Nullable Consumer<Object> onDiscard;

    private HedgePolicy(Builder b) {
        this.delayNanos = Checks.nanos(Checks.notNull("delay", b.delay)); // build() refuses a builder without one
        this.percentile = b.percentile;
        this.floorNanos = Checks.nanos(b.floor);
        this.warmup = b.warmup;
        this.windowNanos = Checks.nanos(b.window);
        this.maxHedges = b.maxHedges;
        this.slowShareSet = b.maxSlowShare;
        double share = b.maxSlowShare != null ? b.maxSlowShare
                : percentile > 0 ? SLOW_SHARE_FACTOR * (100 - percentile) / 100 : 1;
        this.maxSlowShare = share < 1 ? share : 0;
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

    /**
     * The share of recent first attempts outliving the delay above which hedges are refused as an
     * overload (see the class comment): the one set, else {@value #SLOW_SHARE_FACTOR} times
     * (100 &minus; percentile) %; empty when the guard is off (a fixed delay without a share, a
     * share of 1, or a percentile of 50 or below).
     */
    public OptionalDouble maxSlowShare() {
        return maxSlowShare > 0 ? OptionalDouble.of(maxSlowShare) : OptionalDouble.empty();
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
        b.maxSlowShare = slowShareSet;
        b.executor = executor;
        b.onDiscard = onDiscard;
        return b;
    }

    /** The executor sync hedges run on: the one given, else {@link HedgeThreads#DEFAULT}. */
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
                + (maxSlowShare > 0 ? ", maxSlowShare=" + maxSlowShare : "")
                + "}";
    }

    /** Builds a {@link HedgePolicy}. Not thread-safe. */
    public static final class Builder {
        private @Nullable Duration delay;
        private double percentile;
        private Duration floor = Duration.ofMillis(1);
        private int warmup = 100;
        private Duration window = Duration.ofSeconds(30);
        private int maxHedges = 1;
        private @Nullable Double maxSlowShare;
        private @Nullable Executor executor;
        private @Nullable Consumer<Object> onDiscard;

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
         * The overload guard: hedges are refused while more than this share (above 0, at most 1)
         * of the first attempts of about the last second outlived the hedge delay (see the class
         * comment). Default: {@value HedgePolicy#SLOW_SHARE_FACTOR} &times; (100 &minus; percentile)
         * % with a percentile delay (0.1 at p95), none with a fixed delay. 1 turns the guard off.
         */
        public Builder maxSlowShare(double share) {
            Checks.positive("maxSlowShare", share);
            this.maxSlowShare = Checks.between("maxSlowShare", share, 0, 1);
            return this;
        }

        /**
         * Where {@link Retry#call} runs its hedges and the attempts of rounds after a backoff (the
         * first attempt runs on the caller's thread). Default: a shared pool of daemon platform
         * threads, made as needed and dropped after 30 s idle. On Java 21 and later,
         * {@code Executors.newVirtualThreadPerTaskExecutor()} is the better choice: an attempt
         * blocked on I/O then holds no platform thread.
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
