package dev.stagger.shedding.internal;

import dev.stagger.Clock;
import dev.stagger.RandomSource;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;

/**
 * Admission by a concurrency limit, with the counts a Retry-After is computed from. Lock-free
 * apart from what the {@link LimitAlgorithm} does: admission is a compare-and-set on the in-flight
 * count, so in-flight never exceeds the limit read at admission (a limit lowered meanwhile lets
 * what is already in flight finish). Counters are {@link LongAdder}s, exact once quiescent.
 */
public final class ConcurrencyLimiter {
    /** What {@link #tryAcquire(boolean)} returns for a request that must be shed. */
    public static final int SHED = -1;
    /** The trailing window over which admissions and sheds are counted for Retry-After. */
    public static final long DRAIN_WINDOW_NANOS = 1_000_000_000L;

    private final LimitAlgorithm algorithm;
    private final double retryShare;
    private final RetryAfterRule rule;
    private final Clock clock;
    private final RandomSource random;
    private final AtomicInteger inFlight = new AtomicInteger();
    private final WindowCounter admittedRecently;
    private final WindowCounter shedRecently;
    private final LongAdder firstAdmitted = new LongAdder();
    private final LongAdder retriesAdmitted = new LongAdder();
    private final LongAdder firstShed = new LongAdder();
    private final LongAdder retriesShed = new LongAdder();

    /**
     * @param retryShare the share of the limit retries may fill, in [0, 1]: a retry is admitted
     *     only while in-flight is below {@code max(1, floor(limit * retryShare))} (0 sheds every
     *     retry)
     */
    public ConcurrencyLimiter(LimitAlgorithm algorithm, double retryShare, RetryAfterRule rule, Clock clock,
                              RandomSource random) {
        this.algorithm = algorithm;
        this.retryShare = retryShare;
        this.rule = rule;
        this.clock = clock;
        this.random = random;
        long now = clock.nanoTime();
        this.admittedRecently = new WindowCounter(DRAIN_WINDOW_NANOS, now);
        this.shedRecently = new WindowCounter(DRAIN_WINDOW_NANOS, now);
    }

    /**
     * Admits a request if there is room under the limit.
     *
     * @param nowNanos the clock's reading now, which becomes the request's start
     * @return the number in flight with this request, or {@link #SHED}
     */
    public int tryAcquire(boolean retry, long nowNanos) {
        int limit = algorithm.limit();
        int room = retry ? retryRoom(limit) : limit;
        while (true) {
            int current = inFlight.get();
            if (current >= room) {
                return SHED;
            }
            if (inFlight.compareAndSet(current, current + 1)) {
                (retry ? retriesAdmitted : firstAdmitted).increment();
                admittedRecently.increment(nowNanos);
                return current + 1;
            }
        }
    }

    private int retryRoom(int limit) {
        if (retryShare <= 0) {
            return 0;
        }
        return Math.max(1, (int) (limit * retryShare));
    }

    /**
     * Ends an admitted request.
     *
     * @param startNanos the clock reading when it was admitted
     * @param inFlightAtStart what {@link #tryAcquire(boolean, long)} returned for it
     * @param sample whether its latency says something about capacity (false when it threw)
     * @return the limit after it
     */
    public int release(long startNanos, int inFlightAtStart, boolean sample) {
        long end = clock.nanoTime();
        inFlight.decrementAndGet();
        return sample ? algorithm.onSample(startNanos, end, inFlightAtStart) : algorithm.limit();
    }

    /** Counts a request shed at {@code nowNanos} and returns the jittered Retry-After for it, in seconds. */
    public long shed(boolean retry, long nowNanos) {
        (retry ? retriesShed : firstShed).increment();
        shedRecently.increment(nowNanos);
        return rule.jittered(baseRetryAfterSeconds(nowNanos), random.nextDouble());
    }

    /** The Retry-After before jitter, were a request shed now. */
    public long baseRetryAfterSeconds() {
        return baseRetryAfterSeconds(clock.nanoTime());
    }

    private long baseRetryAfterSeconds(long now) {
        return rule.baseSeconds(inFlight.get(), shedRecently.count(now), admittedRecently.count(now));
    }

    public int limit() {
        return algorithm.limit();
    }

    public int inFlight() {
        return inFlight.get();
    }

    public long firstAttemptsAdmitted() {
        return firstAdmitted.sum();
    }

    public long retriesAdmitted() {
        return retriesAdmitted.sum();
    }

    public long firstAttemptsShed() {
        return firstShed.sum();
    }

    public long retriesShed() {
        return retriesShed.sum();
    }
}
