package dev.stagger.shedding.internal;

import dev.stagger.Clock;
import dev.stagger.internal.LimitAlgorithm;
import dev.stagger.RandomSource;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;
import org.jspecify.annotations.Nullable;

/**
 * Admission by a concurrency limit, with the counts a Retry-After is computed from. Lock-free
 * apart from what the {@link LimitAlgorithm} does: admission is a compare-and-set on the in-flight
 * state ({@link InFlight}), so the requests counted against the limit never exceed the limit read
 * at admission (a limit lowered meanwhile lets what is already in flight finish). Counters are
 * {@link LongAdder}s, exact once quiescent.
 *
 * <p><b>Long requests.</b> A request in flight for longer than the algorithm's
 * {@link LimitAlgorithm#longRequestNanos()} stops counting against the limit, for up to
 * {@code limit} such requests at once: a long poll or a slow upload holds its slot for that long
 * and then gives it back to the short requests, so a few of them cannot starve everything else,
 * and in flight stays below twice the limit however many there are.
 */
public final class ConcurrencyLimiter {
    /** The trailing window over which admissions and sheds are counted for Retry-After. */
    public static final long DRAIN_WINDOW_NANOS = 1_000_000_000L;

    private final LimitAlgorithm algorithm;
    private final double retryShare;
    private final RetryAfterRule rule;
    private final Clock clock;
    private final RandomSource random;
    private final AtomicReference<InFlight> inFlight;
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
        this.inFlight = new AtomicReference<>(InFlight.startingAt(now));
        this.admittedRecently = new WindowCounter(DRAIN_WINDOW_NANOS, now);
        this.shedRecently = new WindowCounter(DRAIN_WINDOW_NANOS, now);
    }

    /**
     * Admits a request if there is room under the limit.
     *
     * @param nowNanos the clock's reading now, which becomes the request's start
     * @return the admitted request, to {@link #release} when it ends; null when it must be shed
     */
    public @Nullable Permit tryAcquire(boolean retry, long nowNanos) {
        int limit = algorithm.limit();
        int room = retry ? retryRoom(limit) : limit;
        long epochNanos = algorithm.longRequestNanos();
        while (true) {
            InFlight current = inFlightNow();
            InFlight now = current.at(nowNanos, epochNanos);
            int counted = now.counted(limit);
            if (counted >= room) {
                if (now != current) {
                    inFlight.compareAndSet(current, now); // keep the epochs moving; a lost race moved them already
                }
                return null;
            }
            if (inFlight.compareAndSet(current, now.admitted())) {
                (retry ? retriesAdmitted : firstAdmitted).increment();
                admittedRecently.increment(nowNanos);
                return new Permit(nowNanos, counted + 1, now.epoch);
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
     * @param permit what {@link #tryAcquire(boolean, long)} returned for it
     * @param sample whether its latency says something about capacity (false when it threw)
     * @return the limit after it
     */
    public int release(Permit permit, boolean sample) {
        long end = clock.nanoTime();
        long epochNanos = algorithm.longRequestNanos();
        InFlight current;
        InFlight next;
        do {
            current = inFlightNow();
            next = current.at(end, epochNanos).released(permit.epoch());
        } while (!inFlight.compareAndSet(current, next));
        return sample ? algorithm.onSample(permit.startNanos(), end, permit.inFlight()) : algorithm.limit();
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
        return rule.baseSeconds(counted(now), shedRecently.count(now), admittedRecently.count(now));
    }

    /** Requests counted against the limit at {@code nowNanos} (long ones beyond the limit's size only). */
    private int counted(long nowNanos) {
        return inFlightNow().at(nowNanos, algorithm.longRequestNanos()).counted(algorithm.limit());
    }

    /** The in-flight state now: made with a value, only ever compare-and-set to another. */
    private InFlight inFlightNow() {
        return Objects.requireNonNull(inFlight.get(), "inFlight");
    }

    public int limit() {
        return algorithm.limit();
    }

    /** Every request admitted and not yet released, long ones included. */
    public int inFlight() {
        return inFlightNow().total();
    }

    /** The requests that count against the limit now: {@link #inFlight()} less up to {@code limit} long ones. */
    public int countedInFlight() {
        return counted(clock.nanoTime());
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
