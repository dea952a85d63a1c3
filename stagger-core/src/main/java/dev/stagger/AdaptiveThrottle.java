package dev.stagger;

import dev.stagger.internal.Checks;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.LongAdder;
import org.jspecify.annotations.Nullable;

/**
 * Client-side adaptive throttling (the SRE book's "Handling Overload"): a client that sees its
 * backend reject more and more of what it sends starts rejecting requests itself, before they
 * leave the process, so an overloaded backend spends nothing on them.
 *
 * <p>Over a trailing {@code window} (default 2 minutes) the throttle counts {@code requests} and
 * {@code accepts}: a request the backend accepted counts as both ({@link #onAccepted()}), one it
 * rejected or that failed as one request ({@link #onRejected()}), and one the throttle refused
 * locally as one request, when it refuses it. Each {@link #tryAcquire()} is refused with probability
 * <pre>
 *   p = max(0, (requests - K &times; accepts) / (requests + 1))
 * </pre>
 * {@code K} (default 2) is how many requests per accept the client tolerates: with K = 2 nothing is
 * refused until the backend rejects half of what it gets; a lower K refuses sooner. A healthy
 * backend accepts nearly everything, so {@code p} stays 0 and no random number is drawn. When the
 * backend recovers, accepts grow again and {@code p} falls back to 0 — the refused requests keep
 * counting, so the throttle never shuts the door completely.
 *
 * <p><b>Counted when the outcome is known.</b> A request sent is counted when its outcome is
 * recorded, not when it is sent, so requests still in flight weigh on neither side: counted at
 * sending, the requests of a client's first round trip (or of any burst) would have no accepts yet
 * and be refused at once. A request that is sent but whose outcome is never recorded is not
 * counted at all.
 *
 * <p><b>What counts as accepted.</b> Used on a {@link Retry} ({@link Retry#withThrottle}), every
 * attempt asks {@link #tryAcquire()} first (a refusal ends the call with
 * {@link EndReason#THROTTLED} and a {@link ThrottledException}), and its outcome is judged by the
 * {@link AcceptancePredicate} ({@link Builder#acceptedWhen}) and recorded with {@link #record}. The default counts an attempt as
 * accepted unless the classifier wants to retry it: a result or a permanent failure (an HTTP 404)
 * is the backend answering, while a retryable failure — a timeout, a 503, a 429 with Retry-After —
 * is the backend pushing back. Used directly, call {@link #tryAcquire()} before each request and,
 * for each request sent, {@link #onAccepted()} or {@link #onRejected()} once its outcome is known.
 *
 * <p><b>The window</b> is {@code buckets} (default 20) buckets of {@code window / buckets}, rolled
 * on the clock's {@link Clock#coarseNanoTime() coarse time}: a bucket older than the window is
 * forgotten as a whole, so the counts cover between {@code window - window / buckets} and
 * {@code window} of the past. A bucket holds up to 4,194,303 requests (700,000 a second in the
 * default 6-second buckets); one that would hold more halves both its counts, keeping their ratio.
 *
 * <p><b>Concurrency.</b> Thread-safe and lock-free; {@link #tryAcquire()}, {@link #onAccepted()}
 * and {@link #onRejected()} allocate nothing and read the coarse clock once. A bucket is one word
 * holding its number, its requests and its accepts, changed by compare-and-set: an outcome's
 * request and accept are counted together, a count never lands in a bucket that was recycled, and
 * a count made on a clock reading older than the window is dropped. Within one bucket everything is
 * linearizable, a refusal included (it is counted on the same reading of the bucket it was decided
 * on). Across buckets the reading is not one atomic snapshot: a decision can miss the outcomes
 * recorded in other buckets while it reads, at most the calls in flight at a bucket's edge.
 * {@link #rejections()} is a {@link LongAdder} total, exact when the throttle is quiescent.
 */
public final class AdaptiveThrottle {
    /** A bucket word: its bucket's number (low bits) | requests | accepts. */
    private static final int COUNT_BITS = 22;
    private static final long COUNT_MASK = (1L << COUNT_BITS) - 1;
    private static final int ACCEPTS_SHIFT = 0;
    private static final int REQUESTS_SHIFT = COUNT_BITS;
    private static final int TAG_SHIFT = 2 * COUNT_BITS;
    private static final long TAG_MASK = (1L << (64 - TAG_SHIFT)) - 1;
    private static final long ONE_REQUEST = 1L << REQUESTS_SHIFT;
    private static final long ONE_ACCEPT = 1L << ACCEPTS_SHIFT;
    private static final int MAX_BUCKETS = 1000;

    /** Judges whether the backend accepted an attempt. */
    @FunctionalInterface
    public interface AcceptancePredicate {
        /**
         * @param result the attempt's result, null when it threw
         * @param failure what it threw, null when it returned
         * @param decision what the retry policy's classifier made of the outcome
         */
        boolean isAccepted(@Nullable Object result, @Nullable Throwable failure, Decision decision);
    }

    private final String name;
    private final double k;
    private final long windowNanos;
    private final int buckets;
    private final long bucketNanos;
    private final AcceptancePredicate acceptedWhen;
    private final Clock clock;
    private final RandomSource random;
    private final AtomicLongArray counts;
    private final LongAdder rejections;
    /** The throttle built by the builder, whose counts a view shares; this one itself if not a view. */
    private final AdaptiveThrottle origin;

    /** A view of {@code shared} that judges outcomes with {@code acceptedWhen}. */
    private AdaptiveThrottle(AdaptiveThrottle shared, AcceptancePredicate acceptedWhen) {
        this.name = shared.name;
        this.k = shared.k;
        this.buckets = shared.buckets;
        this.bucketNanos = shared.bucketNanos;
        this.windowNanos = shared.windowNanos;
        this.acceptedWhen = acceptedWhen;
        this.clock = shared.clock;
        this.random = shared.random;
        this.counts = shared.counts;
        this.rejections = shared.rejections;
        this.origin = shared.origin;
    }

    private AdaptiveThrottle(Builder b) {
        this.name = b.name;
        this.k = b.k;
        this.buckets = b.buckets;
        this.bucketNanos = Math.max(1, Checks.nanos(b.window) / b.buckets);
        this.windowNanos = bucketNanos * b.buckets;
        this.acceptedWhen = b.acceptedWhen;
        this.clock = b.clock;
        this.random = b.random;
        this.counts = new AtomicLongArray(b.buckets);
        this.rejections = new LongAdder();
        this.origin = this;
        long epoch = Math.floorDiv(clock.coarseNanoTime(), bucketNanos);
        for (int i = 0; i < b.buckets; i++) {
            // every slot starts as an empty bucket one lap older than the window
            counts.set(i, ((currentEpochOf(i, epoch) - b.buckets) & TAG_MASK) << TAG_SHIFT);
        }
    }

    public static Builder builder(String name) {
        return new Builder(name);
    }

    /** A throttle with the defaults: K = 2 over a 2-minute window. */
    public static AdaptiveThrottle of(String name) {
        return builder(name).build();
    }

    public String name() {
        return name;
    }

    /**
     * This throttle — the same window, counts and refusals — judging the outcomes handed to
     * {@link #record} with {@code acceptedWhen}. For an integration that knows better than a
     * {@link Decision} what the backend said (the HTTP client reads the status and Retry-After).
     */
    public AdaptiveThrottle withAcceptedWhen(AcceptancePredicate acceptedWhen) {
        return new AdaptiveThrottle(this, Checks.notNull("acceptedWhen", acceptedWhen));
    }

    /**
     * Asks to send one request: refuses it with the probability in the class comment, and counts
     * it as a request when it does. A request it lets through is counted by {@link #onAccepted()}
     * or {@link #onRejected()}.
     *
     * @return false when the request must not be sent
     */
    public boolean tryAcquire() {
        long epoch = Math.floorDiv(clock.coarseNanoTime(), bucketNanos);
        int slot = Math.floorMod(epoch, buckets);
        double draw = -1;
        while (true) {
            long mine = counts.get(slot);
            double p = probability(epoch, slot, mine);
            if (p <= 0) {
                return true;
            }
            if (draw < 0) {
                draw = random.nextDouble(); // once per call, however often the counts are read again
            }
            if (draw >= p) {
                return true;
            }
            long next = plus(mine, epoch, ONE_REQUEST);
            // the refusal is counted on the very reading of this bucket it was decided on
            if (next == mine || counts.compareAndSet(slot, mine, next)) {
                rejections.increment();
                return false;
            }
        }
    }

    /** Records a request the backend accepted: one request and one accept. */
    public void onAccepted() {
        add(Math.floorDiv(clock.coarseNanoTime(), bucketNanos), ONE_REQUEST | ONE_ACCEPT);
    }

    /** Records a request that was sent and not accepted (rejected, failed, timed out): one request. */
    public void onRejected() {
        add(Math.floorDiv(clock.coarseNanoTime(), bucketNanos), ONE_REQUEST);
    }

    /**
     * Judges an attempt's outcome with the {@link AcceptancePredicate} and records it with
     * {@link #onAccepted()} or {@link #onRejected()}. A predicate that throws counts the attempt as
     * not accepted.
     */
    public void record(@Nullable Object result, @Nullable Throwable failure, Decision decision) {
        boolean accepted;
        try {
            accepted = acceptedWhen.isAccepted(result, failure, decision);
        } catch (RuntimeException predicateFailed) {
            accepted = false;
        }
        if (accepted) {
            onAccepted();
        } else {
            onRejected();
        }
    }

    /**
     * The throttle whose counts this one shares: the one {@link Builder#build()} made, which is
     * this one unless it was made by {@link #withAcceptedWhen}. Metrics bind it, so that views
     * made per call do not each publish their own meters.
     */
    public AdaptiveThrottle origin() {
        return origin;
    }

    /** The probability with which the next request would be refused, from the counts now. */
    public double rejectionProbability() {
        long epoch = Math.floorDiv(clock.coarseNanoTime(), bucketNanos);
        int slot = Math.floorMod(epoch, buckets);
        return probability(epoch, slot, counts.get(slot));
    }

    /** Requests counted in the window now (refused ones included, ones in flight not). */
    public long requests() {
        return sum(Math.floorDiv(clock.coarseNanoTime(), bucketNanos), REQUESTS_SHIFT);
    }

    /** Accepts counted in the window now. */
    public long accepts() {
        return sum(Math.floorDiv(clock.coarseNanoTime(), bucketNanos), ACCEPTS_SHIFT);
    }

    /** Requests refused since creation. */
    public long rejections() {
        return rejections.sum();
    }

    /** How many requests per accept are tolerated before refusing. */
    public double k() {
        return k;
    }

    /** The window as used: a whole number of buckets (the configured window rounded down to one). */
    public Duration window() {
        return Duration.ofNanos(windowNanos);
    }

    public int buckets() {
        return buckets;
    }

    /**
     * The probability from every bucket in the window at {@code epoch}, with {@code slotWord} as
     * the word of {@code slot} (already read by the caller). Each word is read once, so its
     * requests and accepts belong together.
     */
    private double probability(long epoch, int slot, long slotWord) {
        long req = 0;
        long acc = 0;
        // from the current bucket back through the window: slot i - b holds bucket epoch - b
        for (int back = 0, i = slot; back < buckets; back++, i = i == 0 ? buckets - 1 : i - 1) {
            long w = back == 0 ? slotWord : counts.get(i);
            if (tag(w) == ((epoch - back) & TAG_MASK)) {
                req += (w >>> REQUESTS_SHIFT) & COUNT_MASK;
                acc += (w >>> ACCEPTS_SHIFT) & COUNT_MASK;
            }
        }
        return probability(req, acc);
    }

    private double probability(long req, long acc) {
        double excess = req - k * acc;
        return excess <= 0 ? 0 : excess / (req + 1);
    }

    /** The bucket number a slot holds when it is current at {@code epoch}. */
    private long currentEpochOf(int slot, long epoch) {
        return epoch - Math.floorMod(epoch - slot, buckets);
    }

    private static long tag(long word) {
        return word >>> TAG_SHIFT;
    }

    private long sum(long epoch, int shift) {
        long total = 0;
        int slot = Math.floorMod(epoch, buckets);
        for (int back = 0, i = slot; back < buckets; back++, i = i == 0 ? buckets - 1 : i - 1) {
            long w = counts.get(i);
            if (tag(w) == ((epoch - back) & TAG_MASK)) {
                total += (w >>> shift) & COUNT_MASK;
            }
        }
        return total;
    }

    private void add(long epoch, long increment) {
        int slot = Math.floorMod(epoch, buckets);
        while (true) {
            long w = counts.get(slot);
            long next = plus(w, epoch, increment);
            if (next == w || counts.compareAndSet(slot, w, next)) {
                return;
            }
        }
    }

    /**
     * The bucket word {@code w} (in the slot of {@code epoch}) after adding {@code increment} at
     * {@code epoch}; {@code w} itself when the count is to be dropped.
     */
    private long plus(long w, long epoch, long increment) {
        long tag = epoch & TAG_MASK;
        long held = tag(w);
        if (held == tag) {
            long req = ((w >>> REQUESTS_SHIFT) & COUNT_MASK) + ((increment >>> REQUESTS_SHIFT) & COUNT_MASK);
            long acc = ((w >>> ACCEPTS_SHIFT) & COUNT_MASK) + ((increment >>> ACCEPTS_SHIFT) & COUNT_MASK);
            if (req > COUNT_MASK) { // full: halve both counts, which keeps their ratio
                req >>>= 1;
                acc >>>= 1;
            }
            return (tag << TAG_SHIFT) | (req << REQUESTS_SHIFT) | (acc << ACCEPTS_SHIFT);
        }
        long ahead = (held - tag) & TAG_MASK;
        if (ahead <= 2L * buckets) {
            // the slot already holds a bucket a lap or two newer: this clock reading is older than the window
            return w;
        }
        return (tag << TAG_SHIFT) | increment; // the slot holds an older bucket: recycle it
    }

    @Override
    public String toString() {
        return "AdaptiveThrottle{" + name + ", k=" + k + ", window=" + window() + "}";
    }

    /** Builds an {@link AdaptiveThrottle}. */
    public static final class Builder {
        private final String name;
        private double k = 2;
        private Duration window = Duration.ofMinutes(2);
        private int buckets = 20;
        private AcceptancePredicate acceptedWhen = (result, failure, decision) -> !decision.isRetry();
        private Clock clock = Clock.system();
        private RandomSource random = RandomSource.threadLocal();

        private Builder(String name) {
            this.name = Checks.notNull("name", name);
        }

        /**
         * Requests tolerated per accept before refusing, from 1 to 1000. Default 2 (the SRE
         * book's); 1.1 refuses as soon as a tenth of requests are rejected, 3 lets more through.
         */
        public Builder k(double k) {
            if (!(k >= 1 && k <= 1000)) {
                throw new IllegalArgumentException("k must be in [1, 1000], got " + k);
            }
            this.k = k;
            return this;
        }

        /** The trailing window the counts cover; positive. Default 2 minutes. */
        public Builder window(Duration window) {
            Checks.positive("window", window);
            this.window = window;
            return this;
        }

        /** How many buckets the window rolls in, from 1 to 1000. Default 20. */
        public Builder buckets(int buckets) {
            Checks.atLeast("buckets", buckets, 1);
            if (buckets > MAX_BUCKETS) {
                throw new IllegalArgumentException("buckets must be at most 1000, got " + buckets);
            }
            this.buckets = buckets;
            return this;
        }

        /** What counts as accepted by the backend; see the class comment for the default. */
        public Builder acceptedWhen(AcceptancePredicate acceptedWhen) {
            this.acceptedWhen = Checks.notNull("acceptedWhen", acceptedWhen);
            return this;
        }

        public Builder clock(Clock clock) {
            this.clock = Checks.notNull("clock", clock);
            return this;
        }

        /** Randomness for the refusals; a seeded source makes them reproducible. */
        public Builder random(RandomSource random) {
            this.random = Checks.notNull("random", random);
            return this;
        }

        public AdaptiveThrottle build() {
            if (Checks.nanos(window) < buckets) {
                throw new IllegalArgumentException("window must be at least one nanosecond per bucket, got "
                        + window + " for " + buckets + " buckets");
            }
            return new AdaptiveThrottle(this);
        }
    }
}
