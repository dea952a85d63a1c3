package dev.stagger.shedding.internal;

import dev.stagger.RandomSource;
import dev.stagger.internal.Checks;
import dev.stagger.internal.LimitAlgorithm;
import dev.stagger.shedding.GradientLimit;
import java.util.Arrays;
import java.util.concurrent.locks.ReentrantLock;

/**
 * {@link GradientLimit} at run time (see its Javadoc for the algorithm). Samples are recorded
 * under a {@link ReentrantLock} held for a few arithmetic operations; the sample that ends a
 * minRTT measurement also sorts its {@code minRttSamples} latencies under it. Nothing that blocks
 * runs under the lock. {@link #limit()} is a volatile read.
 */
final class GradientAlgorithm implements LimitAlgorithm {
    /** Windows in a row at the minimum limit, with latency above the tolerance, after which the minRTT is measured again. */
    static final int STALE_AFTER_WINDOWS_AT_MIN = 5;
    private static final double MIN_GRADIENT = 0.5;
    private static final double MAX_GRADIENT = 2.0;

    private final int minLimit;
    private final int maxLimit;
    private final long windowNanos;
    private final double percentile;
    private final long intervalNanos;
    private final double jitter;
    private final int minRttSamples;
    private final double buffer;
    private final double longRequestFactor;
    private final RandomSource random;
    private final ReentrantLock lock = new ReentrantLock();

    private volatile int limit;
    /** {@code longRequestFactor * max(minRTT, sampleWindow)}: see {@link #longRequestNanos()}. */
    private volatile long longRequestNanos;

    // guarded by lock
    private double exactLimit;
    private boolean measuring;
    private long measureFromNanos;
    private final long[] rttSamples;
    private int rttCount;
    private double limitBeforeMeasuring;
    private int measuringAt;
    private long minRttNanos;
    private long windowStartNanos;
    private long windowEndNanos;
    private double windowSum;
    private int windowCount;
    private int windowMaxInFlight;
    private long nextMeasureNanos;
    private int windowsAtMin;

    GradientAlgorithm(GradientLimit config, RandomSource random, long nowNanos) {
        this.minLimit = config.minLimit();
        this.maxLimit = config.maxLimit();
        this.windowNanos = Checks.nanos(config.sampleWindow());
        this.percentile = config.minRttPercentile();
        this.intervalNanos = Checks.nanos(config.minRttInterval());
        this.jitter = config.minRttJitter();
        this.minRttSamples = config.minRttSamples();
        this.buffer = config.minRttBuffer();
        this.longRequestFactor = config.longRequestFactor();
        this.random = random;
        this.rttSamples = new long[minRttSamples];
        this.exactLimit = minLimit;
        this.limit = minLimit;
        this.longRequestNanos = longRequestNanos(0);
        startMeasuring(nowNanos, minLimit);
    }

    @Override
    public int limit() {
        return limit;
    }

    /**
     * {@code longRequestFactor} (10) times the minRTT, and at least that many sample windows (so
     * 1 s by default, also before the first minRTT): a request that runs that long is a long poll,
     * an upload or a download rather than the server's usual work. It stops holding a slot of the
     * limit, and its latency is no sample for a window's mean.
     */
    @Override
    public long longRequestNanos() {
        return longRequestNanos;
    }

    private long longRequestNanos(long minRtt) {
        return (long) Math.min(longRequestFactor * Math.max(minRtt, windowNanos), (double) (Long.MAX_VALUE / 4));
    }

    /** True while the limit is pinned to measure the minRTT. */
    boolean measuring() {
        lock.lock();
        try {
            return measuring;
        } finally {
            lock.unlock();
        }
    }

    /** The last measured minRTT in nanoseconds; 0 before the first measurement ends. */
    long minRttNanos() {
        lock.lock();
        try {
            return minRttNanos;
        } finally {
            lock.unlock();
        }
    }

    @Override
    public int onSample(long startNanos, long endNanos, int inFlight) {
        long rtt = Math.max(0, endNanos - startNanos);
        lock.lock();
        try {
            if (measuring) {
                if (startNanos - measureFromNanos >= 0) { // admitted under the pinned limit
                    rttSamples[rttCount++] = rtt;
                    if (rttCount == minRttSamples) {
                        finishMeasuring(endNanos);
                    }
                }
                return limit;
            }
            if (startNanos - windowStartNanos < 0) {
                return limit; // admitted under an earlier limit: says nothing about this one
            }
            if (rtt > longRequestNanos) {
                return limit; // a long poll or an upload: its length is its own, not the server's queue
            }
            windowSum += rtt;
            windowCount++;
            windowMaxInFlight = Math.max(windowMaxInFlight, inFlight);
            if (endNanos - windowEndNanos >= 0 && windowCount >= limit) { // a full round of the limit
                closeWindow();
                int served = Math.min(windowMaxInFlight, limit); // what the server was just serving
                openWindow(endNanos);
                if (windowsAtMin >= STALE_AFTER_WINDOWS_AT_MIN) {
                    startMeasuring(endNanos, minLimit); // the service got slower for good: measure it as it is
                } else if (endNanos - nextMeasureNanos >= 0) {
                    startMeasuring(endNanos, Math.max(minLimit, served));
                }
            }
            return limit;
        } finally {
            lock.unlock();
        }
    }

    private void closeWindow() {
        double sampleRtt = windowSum / windowCount;
        double gradient = sampleRtt <= 0 ? MAX_GRADIENT : minRttNanos * (1.0 + buffer) / sampleRtt;
        boolean withinTolerance = gradient >= 1.0;
        gradient = Math.max(MIN_GRADIENT, Math.min(MAX_GRADIENT, gradient));
        double scaled = gradient * exactLimit;
        double target = scaled + Math.sqrt(scaled);
        if (target > exactLimit && 2 * windowMaxInFlight < limit) {
            target = exactLimit; // the window never used half the limit: it tells nothing about more
        }
        setLimit(Math.max(minLimit, Math.min(maxLimit, target)));
        // at the minimum because latency is high; not because the limit sits unused on a quiet server
        windowsAtMin = limit == minLimit && !withinTolerance ? windowsAtMin + 1 : 0;
    }

    private void setLimit(double value) {
        exactLimit = value;
        limit = (int) value;
    }

    private void openWindow(long nowNanos) {
        windowStartNanos = nowNanos;
        windowEndNanos = nowNanos + windowNanos;
        windowSum = 0;
        windowCount = 0;
        windowMaxInFlight = 0;
    }

    /** Pins the limit to {@code pin} until {@code minRttSamples} requests admitted from now have completed. */
    private void startMeasuring(long nowNanos, int pin) {
        limitBeforeMeasuring = exactLimit;
        measureAt(nowNanos, pin);
    }

    private void measureAt(long nowNanos, int pin) {
        measuring = true;
        measureFromNanos = nowNanos;
        rttCount = 0;
        measuringAt = pin;
        setLimit(pin);
    }

    private void finishMeasuring(long nowNanos) {
        Arrays.sort(rttSamples, 0, rttCount);
        int index = (int) Math.ceil(percentile * rttCount) - 1;
        long measured = rttSamples[Math.max(0, Math.min(rttCount - 1, index))];
        if (measuringAt > minLimit && minRttNanos > 0) {
            if (measured > minRttNanos * (1.0 + buffer)) {
                // they queued: the server was not serving this many at its idle latency; try half
                measureAt(nowNanos, Math.max(minLimit, measuringAt / 2));
                return;
            }
            // Within the tolerance, requests may still have queued a little: such a measurement
            // may lower the minRTT but not raise it, or each one would ratchet it (and latency) up.
            measured = Math.min(measured, minRttNanos);
        }
        minRttNanos = measured;
        longRequestNanos = longRequestNanos(measured);
        measuring = false;
        windowsAtMin = 0;
        setLimit(limitBeforeMeasuring);
        openWindow(nowNanos);
        double wait = intervalNanos * (1.0 + jitter * random.nextDouble());
        nextMeasureNanos = nowNanos + (long) Math.min(wait, (double) (Long.MAX_VALUE / 4));
    }
}
