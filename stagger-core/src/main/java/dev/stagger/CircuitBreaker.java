package dev.stagger;

import dev.stagger.internal.Checks;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.BiPredicate;

/**
 * Stops calling a downstream that is failing, so that it can recover and callers fail fast.
 *
 * <p><b>CLOSED</b>: calls pass and outcomes are recorded. The breaker trips to OPEN when, within
 * the sliding {@code window} (default 30 s, in 10 buckets), at least {@code minimumCalls} (default
 * 20) were recorded and the failure rate is at least {@code failureRateThreshold} (default 50 %),
 * or — the simple mode — after {@code consecutiveFailures} failures in a row. Setting only
 * {@code consecutiveFailures} selects the simple mode alone.
 *
 * <p><b>OPEN</b>: every call is refused at once with a {@link CircuitOpenException} that says when
 * the next probe is allowed, for {@code openDuration} (default 30 s). With
 * {@link Builder#openBackoff(Backoff)} the duration grows on each re-open in a row and resets
 * once the breaker closes.
 *
 * <p><b>HALF_OPEN</b>: {@code halfOpenPermits} (default 1) probes pass; when all succeed the breaker
 * closes with fresh counts, and any failure re-opens it.
 *
 * <p>What counts as a failure is configurable ({@link Builder#recordFailures(Classifier)}: a 404
 * is not the downstream being sick). Slow calls can count as failures too.
 *
 * <p>Thread-safe and lock-free: counts are {@link LongAdder}s in time buckets, the state is one
 * atomic reference changed by compare-and-set, so every transition is legal and happens once. The
 * closed-state success path reads a millisecond-granularity clock, never the OS clock.
 */
public final class CircuitBreaker {

    /** The breaker's states. */
    public enum State { CLOSED, OPEN, HALF_OPEN }

    /** A change of state. */
    public record Transition(String breaker, State from, State to, long atNanos) {
    }

    /** Receives transitions, synchronously, on the thread that caused them. Must not throw. */
    @FunctionalInterface
    public interface Listener {
        void onTransition(Transition transition);
    }

    /**
     * Counts at one moment.
     *
     * @param calls successes + failures recorded in the current window (closed state)
     * @param failureRate failures / calls in the window, 0 when there were none
     */
    public record Metrics(State state, long calls, long failures, long slowCalls, double failureRate,
                          int consecutiveFailures, long rejected, long transitions) {
    }

    private final String name;
    private final double failureRateThreshold;
    private final int minimumCalls;
    private final int consecutiveFailuresToOpen;
    private final long bucketNanos;
    private final int bucketCount;
    private final long openNanos;
    private final Backoff openBackoff;
    private final int halfOpenPermits;
    private final long slowCallNanos;
    private final BiPredicate<Object, Throwable> isFailure;
    private final Clock clock;
    private final RandomSource random;
    private final List<Listener> listeners = new CopyOnWriteArrayList<>();

    private final AtomicReference<Phase> phase;
    private final LongAdder rejected = new LongAdder();
    private final LongAdder transitions = new LongAdder();

    private CircuitBreaker(Builder b) {
        this.name = b.name;
        this.failureRateThreshold = b.rateModeDisabled() ? Double.NaN : b.failureRateThreshold;
        this.minimumCalls = b.minimumCalls;
        this.consecutiveFailuresToOpen = b.consecutiveFailures;
        this.bucketCount = b.buckets;
        this.bucketNanos = Math.max(1, Checks.nanos(b.window) / b.buckets);
        this.openNanos = Checks.nanos(b.openDuration);
        this.openBackoff = b.openBackoff;
        this.halfOpenPermits = b.halfOpenPermits;
        this.slowCallNanos = b.slowCallThreshold == null ? 0 : Checks.nanos(b.slowCallThreshold);
        this.isFailure = b.isFailure;
        this.clock = b.clock;
        this.random = b.random;
        this.listeners.addAll(b.listeners);
        this.phase = new AtomicReference<>(new Closed(bucketCount));
    }

    public static Builder builder(String name) {
        return new Builder(name);
    }

    /** A breaker with every default. */
    public static CircuitBreaker of(String name) {
        return builder(name).build();
    }

    public String name() {
        return name;
    }

    public State state() {
        Phase p = phase.get();
        if (p instanceof Open open && clock.nanoTime() >= open.untilNanos) {
            return State.HALF_OPEN; // what the next call would see
        }
        return p.state();
    }

    /** Registers a transition listener (for metrics binders and logs). */
    public void addListener(Listener listener) {
        listeners.add(Checks.notNull("listener", listener));
    }

    /**
     * Asks to make a call. Every call that gets a permit must report its outcome with
     * {@link #record(Object, Throwable, long)}, or give the permit back with
     * {@link #releasePermission()} when it is abandoned without one.
     *
     * @return false when the breaker refuses the call
     */
    public boolean tryAcquirePermission() {
        while (true) {
            Phase p = phase.get();
            if (p instanceof Closed) {
                return true;
            }
            if (p instanceof Open open) {
                if (clock.nanoTime() < open.untilNanos) {
                    rejected.increment();
                    return false;
                }
                // The mover's own permit is taken before the phase is published: once it is, other
                // threads may take the rest, and taking ours afterwards could admit one probe too many.
                if (transition(p, new HalfOpen(halfOpenPermits - 1, open.consecutiveOpens))) {
                    return true;
                }
                continue;
            }
            if (((HalfOpen) p).tryTakePermit()) {
                return true;
            }
            rejected.increment();
            return false;
        }
    }

    /**
     * Gives back a permission whose call was abandoned before it had an outcome (an async attempt
     * cancelled in flight), so that a half-open breaker is not left waiting for a probe that will
     * never report. Does nothing in other states.
     */
    public void releasePermission() {
        if (phase.get() instanceof HalfOpen half) {
            half.permits.incrementAndGet();
        }
    }

    /** The exception to throw for a refused call; {@code cause} and {@code lastResult} may be null. */
    public CircuitOpenException openException(Throwable cause, Object lastResult) {
        Phase p = phase.get();
        long wait = p instanceof Open open ? Math.max(0, open.untilNanos - clock.nanoTime()) : 0;
        return new CircuitOpenException(name, Duration.ofNanos(wait), cause, lastResult);
    }

    /** True when slow calls are counted, so callers must measure each call's duration. */
    public boolean measuresDuration() {
        return slowCallNanos > 0;
    }

    /**
     * Records a permitted call's outcome.
     *
     * @param result the call's result, when it returned
     * @param failure what it threw, or null
     * @param durationNanos how long it took, or a negative value when not measured
     */
    public void record(Object result, Throwable failure, long durationNanos) {
        boolean slow = slowCallNanos > 0 && durationNanos >= slowCallNanos;
        if (slow || isFailure.test(result, failure)) {
            onFailure(slow);
        } else {
            onSuccess();
        }
    }

    /** Records a success. */
    public void onSuccess() {
        Phase p = phase.get();
        if (p instanceof Closed closed) {
            if (failureRateThreshold == failureRateThreshold) { // not NaN: rate mode on
                closed.bucket(clock.coarseNanoTime() / bucketNanos).successes.increment();
            }
            if (closed.consecutive.get() != 0) {
                closed.consecutive.set(0);
            }
        } else if (p instanceof HalfOpen half) {
            if (half.successes.incrementAndGet() >= halfOpenPermits) {
                transition(p, new Closed(bucketCount));
            }
        }
    }

    /** Records a failure. */
    public void onFailure() {
        onFailure(false);
    }

    private void onFailure(boolean slow) {
        Phase p = phase.get();
        if (p instanceof Closed closed) {
            int consecutive = closed.consecutive.incrementAndGet();
            boolean trip = consecutiveFailuresToOpen > 0 && consecutive >= consecutiveFailuresToOpen;
            if (failureRateThreshold == failureRateThreshold) {
                long epoch = clock.coarseNanoTime() / bucketNanos;
                Bucket b = closed.bucket(epoch);
                b.failures.increment();
                if (slow) {
                    b.slow.increment();
                }
                if (!trip) {
                    long[] counts = closed.counts(epoch);
                    long calls = counts[0] + counts[1];
                    trip = calls >= minimumCalls && counts[1] >= failureRateThreshold * calls;
                }
            }
            if (trip) {
                open(p, 1);
            }
        } else if (p instanceof HalfOpen half) {
            open(p, half.consecutiveOpens + 1);
        }
    }

    private void open(Phase from, int consecutiveOpens) {
        long duration = openNanos;
        if (openBackoff != null) {
            duration = Math.max(openNanos, openBackoff.start(random).nextDelayNanos(consecutiveOpens));
        }
        long now = clock.nanoTime();
        long until = now + duration;
        if (until < now) {
            until = Long.MAX_VALUE; // overflowed (duration is never negative); a negative reading is fine
        }
        transition(from, new Open(until, consecutiveOpens));
    }

    private boolean transition(Phase from, Phase to) {
        if (!phase.compareAndSet(from, to)) {
            return false;
        }
        transitions.increment();
        if (!listeners.isEmpty()) {
            Transition t = new Transition(name, from.state(), to.state(), clock.nanoTime());
            for (Listener l : listeners) {
                try {
                    l.onTransition(t);
                } catch (RuntimeException ignored) {
                    // a listener must not break the breaker
                }
            }
        }
        return true;
    }

    /** Runs {@code operation} if the breaker allows it, recording the outcome. */
    public <T> T call(Callable<T> operation) throws Exception {
        if (!tryAcquirePermission()) {
            throw openException(null, null);
        }
        long start = slowCallNanos > 0 ? clock.nanoTime() : 0;
        T result;
        try {
            result = operation.call();
        } catch (Throwable t) {
            record(null, t, slowCallNanos > 0 ? clock.nanoTime() - start : -1);
            throw t;
        }
        record(result, null, slowCallNanos > 0 ? clock.nanoTime() - start : -1);
        return result;
    }

    /** Forces the breaker closed with fresh counts (an operator's action). */
    public void reset() {
        Phase p = phase.get();
        if (!(p instanceof Closed)) {
            transition(p, new Closed(bucketCount));
        }
    }

    public Metrics metrics() {
        Phase p = phase.get();
        long successes = 0;
        long failures = 0;
        long slow = 0;
        int consecutive = 0;
        if (p instanceof Closed closed) {
            long[] counts = closed.counts(clock.coarseNanoTime() / bucketNanos);
            successes = counts[0];
            failures = counts[1];
            slow = counts[2];
            consecutive = closed.consecutive.get();
        }
        long calls = successes + failures;
        return new Metrics(state(), calls, failures, slow, calls == 0 ? 0 : failures / (double) calls,
                consecutive, rejected.sum(), transitions.sum());
    }

    @Override
    public String toString() {
        return "CircuitBreaker{" + name + ", " + state() + "}";
    }

    private abstract static class Phase {
        abstract State state();
    }

    private static final class Closed extends Phase {
        final AtomicReferenceArray<Bucket> buckets;
        final AtomicInteger consecutive = new AtomicInteger();

        Closed(int bucketCount) {
            this.buckets = new AtomicReferenceArray<>(bucketCount);
        }

        @Override
        State state() {
            return State.CLOSED;
        }

        Bucket bucket(long epoch) {
            int index = (int) Math.floorMod(epoch, (long) buckets.length());
            while (true) {
                Bucket b = buckets.get(index);
                if (b != null && b.epoch >= epoch) {
                    return b; // a racing thread that read a later time already rotated: count there
                }
                Bucket fresh = new Bucket(epoch);
                if (buckets.compareAndSet(index, b, fresh)) {
                    return fresh;
                }
            }
        }

        /** successes, failures, slow calls over buckets still inside the window. */
        long[] counts(long epoch) {
            long[] c = new long[3];
            int n = buckets.length();
            for (int i = 0; i < n; i++) {
                Bucket b = buckets.get(i);
                if (b != null && b.epoch > epoch - n) {
                    c[0] += b.successes.sum();
                    c[1] += b.failures.sum();
                    c[2] += b.slow.sum();
                }
            }
            return c;
        }
    }

    private static final class Open extends Phase {
        final long untilNanos;
        final int consecutiveOpens;

        Open(long untilNanos, int consecutiveOpens) {
            this.untilNanos = untilNanos;
            this.consecutiveOpens = consecutiveOpens;
        }

        @Override
        State state() {
            return State.OPEN;
        }
    }

    private static final class HalfOpen extends Phase {
        final AtomicInteger permits;
        final AtomicInteger successes = new AtomicInteger();
        final int consecutiveOpens;

        HalfOpen(int permits, int consecutiveOpens) {
            this.permits = new AtomicInteger(permits);
            this.consecutiveOpens = consecutiveOpens;
        }

        /** Never below zero, so a refused call takes nothing and a released permit really comes back. */
        boolean tryTakePermit() {
            while (true) {
                int left = permits.get();
                if (left <= 0) {
                    return false;
                }
                if (permits.compareAndSet(left, left - 1)) {
                    return true;
                }
            }
        }

        @Override
        State state() {
            return State.HALF_OPEN;
        }
    }

    private static final class Bucket {
        final long epoch;
        final LongAdder successes = new LongAdder();
        final LongAdder failures = new LongAdder();
        final LongAdder slow = new LongAdder();

        Bucket(long epoch) {
            this.epoch = epoch;
        }
    }

    /** Builds a {@link CircuitBreaker}. */
    public static final class Builder {
        private final String name;
        private double failureRateThreshold = 0.5;
        private boolean rateSet;
        private int minimumCalls = 20;
        private int consecutiveFailures;
        private Duration window = Duration.ofSeconds(30);
        private int buckets = 10;
        private Duration openDuration = Duration.ofSeconds(30);
        private Backoff openBackoff;
        private int halfOpenPermits = 1;
        private Duration slowCallThreshold;
        private BiPredicate<Object, Throwable> isFailure = (result, failure) -> failure != null;
        private Clock clock = Clock.system();
        private RandomSource random = RandomSource.threadLocal();
        private final List<Listener> listeners = new CopyOnWriteArrayList<>();

        private Builder(String name) {
            this.name = Checks.notNull("name", name);
        }

        /** Failure share in (0, 1] at which the breaker opens. Default 0.5. */
        public Builder failureRateThreshold(double threshold) {
            if (!(threshold > 0 && threshold <= 1)) {
                throw new IllegalArgumentException("failureRateThreshold must be in (0, 1], got " + threshold);
            }
            this.failureRateThreshold = threshold;
            this.rateSet = true;
            return this;
        }

        /** Calls the window must hold before the rate can trip the breaker; at least 1. Default 20. */
        public Builder minimumCalls(int minimumCalls) {
            this.minimumCalls = Checks.atLeast("minimumCalls", minimumCalls, 1);
            return this;
        }

        /** Open after this many failures in a row; the simple mode. */
        public Builder consecutiveFailures(int consecutiveFailures) {
            this.consecutiveFailures = Checks.atLeast("consecutiveFailures", consecutiveFailures, 1);
            return this;
        }

        /** The sliding window of the failure rate. Default 30 s. */
        public Builder window(Duration window) {
            this.window = Checks.positive("window", window);
            return this;
        }

        /** Buckets the window is divided into; 1 to 1000. Default 10. */
        public Builder buckets(int buckets) {
            this.buckets = Checks.atLeast("buckets", buckets, 1);
            if (buckets > 1000) {
                throw new IllegalArgumentException("buckets must be at most 1000, got " + buckets);
            }
            return this;
        }

        /** How long the breaker stays open before letting a probe through. Default 30 s. */
        public Builder openDuration(Duration openDuration) {
            this.openDuration = Checks.positive("openDuration", openDuration);
            return this;
        }

        /**
         * Grows the open duration on repeated re-opens: the k-th open in a row lasts
         * {@code max(openDuration, backoff delay k)}. Resets when the breaker closes.
         */
        public Builder openBackoff(Backoff backoff) {
            this.openBackoff = Checks.notNull("openBackoff", backoff);
            return this;
        }

        /** Probes admitted while half-open; all must succeed to close. Default 1. */
        public Builder halfOpenPermits(int permits) {
            this.halfOpenPermits = Checks.atLeast("halfOpenPermits", permits, 1);
            return this;
        }

        /** Calls at least this slow count as failures (and as slow calls in the metrics). */
        public Builder slowCallThreshold(Duration threshold) {
            this.slowCallThreshold = Checks.positive("slowCallThreshold", threshold);
            return this;
        }

        /** Which outcomes are failures. Default: every exception, no result. */
        public Builder recordFailure(BiPredicate<Object, Throwable> isFailure) {
            this.isFailure = Checks.notNull("recordFailure", isFailure);
            return this;
        }

        /**
         * An outcome counts as a failure when {@code classifier} would retry it: transient errors are
         * the sign of a sick downstream; permanent ones (a 404, a constraint violation) are not. The
         * classifier is called with a null context.
         */
        public Builder recordFailures(Classifier classifier) {
            Checks.notNull("classifier", classifier);
            this.isFailure = (result, failure) -> classifier.classify(result, failure, null).isRetry();
            return this;
        }

        public Builder clock(Clock clock) {
            this.clock = Checks.notNull("clock", clock);
            return this;
        }

        /** Randomness for a jittered {@link #openBackoff(Backoff)}. */
        public Builder random(RandomSource random) {
            this.random = Checks.notNull("random", random);
            return this;
        }

        public Builder listener(Listener listener) {
            listeners.add(Checks.notNull("listener", listener));
            return this;
        }

        boolean rateModeDisabled() {
            return consecutiveFailures > 0 && !rateSet;
        }

        public CircuitBreaker build() {
            return new CircuitBreaker(this);
        }
    }
}
