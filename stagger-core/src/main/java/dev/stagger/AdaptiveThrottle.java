package dev.stagger;

import dev.stagger.internal.Checks;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.LongAdder;

/**
 * Client-side adaptive throttling (the SRE book's "Handling Overload"): a client that sees its
 * backend reject more and more of what it sends starts rejecting requests itself, before they
 * leave the process, so an overloaded backend spends nothing on them.
 *
 * <p>Over a trailing {@code window} (default 2 minutes) the throttle counts {@code requests} — every
 * {@link #tryAcquire()}, including the ones it refuses — and {@code accepts} — every
 * {@link #onAccepted()}, one for each attempt the backend accepted. Each request is refused with
 * probability
 * <pre>
 *   p = max(0, (requests - K &times; accepts) / (requests + 1))
 * </pre>
 * computed on the counts before that request. {@code K} (default 2) is how many requests per accept
 * the client tolerates: with K = 2 nothing is refused until the backend rejects half of what it
 * gets; a lower K refuses sooner. A healthy backend accepts nearly everything, so {@code p} stays 0
 * and no random number is drawn. When the backend recovers, accepts grow again and {@code p} falls
 * back to 0 — the refused requests keep counting, so the throttle never shuts the door completely.
 *
 * <p><b>What counts as accepted.</b> Used on a {@link Retry} ({@link Retry#withThrottle}), every
 * attempt asks {@link #tryAcquire()} first (a refusal ends the call with
 * {@link EndReason#THROTTLED} and a {@link ThrottledException}), and its outcome is judged by the
 * {@link AcceptancePredicate} ({@link Builder#acceptedWhen}). The default counts an attempt as
 * accepted unless the classifier wants to retry it: a result or a permanent failure (an HTTP 404)
 * is the backend answering, while a retryable failure — a timeout, a 503, a 429 with Retry-After —
 * is the backend pushing back. Used directly, call {@link #tryAcquire()} before each request and
 * {@link #onAccepted()} when the backend accepted it.
 *
 * <p><b>The window</b> is {@code buckets} (default 20) buckets of {@code window / buckets}, rolled
 * on the clock's {@link Clock#coarseNanoTime() coarse time}: a bucket older than the window is
 * forgotten as a whole, so the counts cover between {@code window - window / buckets} and
 * {@code window} of the past. Counts per bucket saturate at 2<sup>36</sup> - 1.
 *
 * <p><b>Concurrency.</b> Thread-safe and lock-free; {@link #tryAcquire()} and {@link #onAccepted()}
 * allocate nothing and read the coarse clock once. Each count is a compare-and-set on a word that
 * carries its bucket's number, so a count is never added to a bucket that was recycled, and a count
 * made on a clock reading older than the window is dropped. The probability is computed from a
 * reading of the buckets that is not one atomic snapshot: it can miss at most the requests and
 * accepts recorded concurrently with it. {@link #rejections()} is a {@link LongAdder} total, exact
 * when the throttle is quiescent.
 */
public final class AdaptiveThrottle {
    /** Bits of a bucket word holding its count; the bits above hold the bucket's number. */
    private static final int COUNT_BITS = 36;
    private static final long COUNT_MASK = (1L << COUNT_BITS) - 1;
    private static final long TAG_MASK = (1L << (64 - COUNT_BITS)) - 1;
    private static final long HALF_TAG_RANGE = 1L << (64 - COUNT_BITS - 1);
    private static final int MAX_BUCKETS = 1000;

    /** Judges whether the backend accepted an attempt. */
    @FunctionalInterface
    public interface AcceptancePredicate {
        /**
         * @param result the attempt's result, null when it threw
         * @param failure what it threw, null when it returned
         * @param decision what the retry policy's classifier made of the outcome
         */
        boolean isAccepted(Object result, Throwable failure, Decision decision);
    }

    private final String name;
    private final double k;
    private final long windowNanos;
    private final int buckets;
    private final long bucketNanos;
    private final AcceptancePredicate acceptedWhen;
    private final Clock clock;
    private final RandomSource random;
    private final AtomicLongArray requests;
    private final AtomicLongArray accepts;
    private final LongAdder rejections = new LongAdder();

    private AdaptiveThrottle(Builder b) {
        this.name = b.name;
        this.k = b.k;
        this.buckets = b.buckets;
        this.bucketNanos = Math.max(1, Checks.nanos(b.window) / b.buckets);
        this.windowNanos = bucketNanos * b.buckets;
        this.acceptedWhen = b.acceptedWhen;
        this.clock = b.clock;
        this.random = b.random;
        this.requests = new AtomicLongArray(b.buckets);
        this.accepts = new AtomicLongArray(b.buckets);
        long epoch = Math.floorDiv(clock.coarseNanoTime(), bucketNanos);
        for (int i = 0; i < b.buckets; i++) {
            // every slot starts as an empty bucket older than the window
            long stale = (epoch - b.buckets - Math.floorMod(epoch - i, b.buckets)) & TAG_MASK;
            requests.set(i, stale << COUNT_BITS);
            accepts.set(i, stale << COUNT_BITS);
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
     * Asks to send one request: counts it, then refuses it with the probability in the class
     * comment.
     *
     * @return false when the request must not be sent
     */
    public boolean tryAcquire() {
        long epoch = Math.floorDiv(clock.coarseNanoTime(), bucketNanos);
        long req = sum(requests, epoch);
        long acc = sum(accepts, epoch);
        add(requests, epoch);
        double p = probability(req, acc);
        if (p > 0 && random.nextDouble() < p) {
            rejections.increment();
            return false;
        }
        return true;
    }

    /** Records that the backend accepted a request. */
    public void onAccepted() {
        add(accepts, Math.floorDiv(clock.coarseNanoTime(), bucketNanos));
    }

    /**
     * Judges an attempt's outcome with the {@link AcceptancePredicate} and records an accept when
     * it says so. A predicate that throws counts the attempt as not accepted.
     */
    public void record(Object result, Throwable failure, Decision decision) {
        boolean accepted;
        try {
            accepted = acceptedWhen.isAccepted(result, failure, decision);
        } catch (RuntimeException predicateFailed) {
            accepted = false;
        }
        if (accepted) {
            onAccepted();
        }
    }

    /** The probability with which the next request would be refused, from the counts now. */
    public double rejectionProbability() {
        long epoch = Math.floorDiv(clock.coarseNanoTime(), bucketNanos);
        return probability(sum(requests, epoch), sum(accepts, epoch));
    }

    /** Requests counted in the window now (refused ones included). */
    public long requests() {
        return sum(requests, Math.floorDiv(clock.coarseNanoTime(), bucketNanos));
    }

    /** Accepts counted in the window now. */
    public long accepts() {
        return sum(accepts, Math.floorDiv(clock.coarseNanoTime(), bucketNanos));
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

    private double probability(long req, long acc) {
        double excess = req - k * acc;
        return excess <= 0 ? 0 : excess / (req + 1);
    }

    /** The bucket number a slot holds when it is current at {@code epoch}. */
    private long currentEpochOf(int slot, long epoch) {
        return epoch - Math.floorMod(epoch - slot, buckets);
    }

    private long sum(AtomicLongArray counts, long epoch) {
        long total = 0;
        for (int slot = 0; slot < buckets; slot++) {
            long w = counts.get(slot);
            if ((w >>> COUNT_BITS) == (currentEpochOf(slot, epoch) & TAG_MASK)) {
                total += w & COUNT_MASK;
            }
        }
        return total;
    }

    private void add(AtomicLongArray counts, long epoch) {
        int slot = (int) Math.floorMod(epoch, buckets);
        long tag = epoch & TAG_MASK;
        while (true) {
            long w = counts.get(slot);
            long held = w >>> COUNT_BITS;
            long next;
            if (held == tag) {
                if ((w & COUNT_MASK) == COUNT_MASK) {
                    return; // saturated
                }
                next = w + 1;
            } else if (((tag - held) & TAG_MASK) < HALF_TAG_RANGE) {
                next = (tag << COUNT_BITS) | 1; // the slot holds an older bucket: recycle it
            } else {
                return; // the slot already holds a newer bucket: this reading is older than the window
            }
            if (counts.compareAndSet(slot, w, next)) {
                return;
            }
        }
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
