package dev.stagger.shedding.internal;

import dev.stagger.RandomSource;
import dev.stagger.shedding.GradientLimit;
import java.util.Arrays;
import java.util.concurrent.locks.ReentrantLock;

/**
 * {@link GradientLimit} at run time (see its Javadoc for the algorithm). Samples are recorded
 * under a {@link ReentrantLock} held for a few array writes; once per window the holder also sorts
 * at most {@value #WINDOW_CAPACITY} latencies to take their percentile. Nothing that blocks runs
 * under the lock. {@link #limit()} is a volatile read. A window's samples are the requests
 * admitted since it opened, and it closes on the first of them to complete after its end, so the
 * limit changes at most once per round trip and never on latencies that an earlier limit caused.
 */
final class GradientAlgorithm implements LimitAlgorithm {
    /** Latencies kept per window; beyond this the newest overwrite the oldest. */
    static final int WINDOW_CAPACITY = 1000;
    /** Windows in a row at the minimum limit after which the minRTT is measured again. */
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
    private final RandomSource random;
    private final ReentrantLock lock = new ReentrantLock();

    private volatile int limit;

    // guarded by lock
    private boolean measuring;
    private long measureFromNanos;
    private final long[] rttSamples;
    private int rttCount;
    private int limitBeforeMeasuring;
    private long minRttNanos;
    private long windowStartNanos;
    private long windowEndNanos;
    private final long[] window = new long[WINDOW_CAPACITY];
    private int windowCount;
    private int windowMaxInFlight;
    private long nextMeasureNanos;
    private int windowsAtMin;
    private final long[] scratch;

    GradientAlgorithm(GradientLimit config, RandomSource random, long nowNanos) {
        this.minLimit = config.minLimit();
        this.maxLimit = config.maxLimit();
        this.windowNanos = Check.nanos(config.sampleWindow());
        this.percentile = config.samplePercentile();
        this.intervalNanos = Check.nanos(config.minRttInterval());
        this.jitter = config.minRttJitter();
        this.minRttSamples = config.minRttSamples();
        this.buffer = config.minRttBuffer();
        this.random = random;
        this.rttSamples = new long[minRttSamples];
        this.scratch = new long[Math.max(WINDOW_CAPACITY, minRttSamples)];
        this.limit = minLimit;
        startMeasuring(nowNanos);
    }

    @Override
    public int limit() {
        return limit;
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
            window[windowCount % WINDOW_CAPACITY] = rtt;
            windowCount++;
            windowMaxInFlight = Math.max(windowMaxInFlight, inFlight);
            if (endNanos - windowEndNanos >= 0) {
                closeWindow();
                openWindow(endNanos);
                if (windowsAtMin >= STALE_AFTER_WINDOWS_AT_MIN || endNanos - nextMeasureNanos >= 0) {
                    startMeasuring(endNanos);
                }
            }
            return limit;
        } finally {
            lock.unlock();
        }
    }

    private void closeWindow() {
        long sampleRtt = percentile(window, Math.min(windowCount, WINDOW_CAPACITY));
        double gradient = sampleRtt <= 0 ? MAX_GRADIENT : minRttNanos * (1.0 + buffer) / sampleRtt;
        gradient = Math.max(MIN_GRADIENT, Math.min(MAX_GRADIENT, gradient));
        double scaled = gradient * limit;
        double next = scaled + Math.sqrt(scaled);
        if (next > limit && 2 * windowMaxInFlight < limit) {
            next = limit; // the window never used half the limit: it tells nothing about more
        }
        int updated = (int) Math.max(minLimit, Math.min(maxLimit, next));
        windowsAtMin = updated == minLimit ? windowsAtMin + 1 : 0;
        limit = updated;
    }

    private void openWindow(long nowNanos) {
        windowStartNanos = nowNanos;
        windowEndNanos = nowNanos + windowNanos;
        windowCount = 0;
        windowMaxInFlight = 0;
    }

    private void startMeasuring(long nowNanos) {
        measuring = true;
        measureFromNanos = nowNanos;
        rttCount = 0;
        limitBeforeMeasuring = limit;
        limit = minLimit;
    }

    private void finishMeasuring(long nowNanos) {
        minRttNanos = percentile(rttSamples, rttCount);
        measuring = false;
        windowsAtMin = 0;
        limit = limitBeforeMeasuring;
        openWindow(nowNanos);
        double wait = intervalNanos * (1.0 + jitter * random.nextDouble());
        nextMeasureNanos = nowNanos + (long) Math.min(wait, (double) (Long.MAX_VALUE / 4));
    }

    private long percentile(long[] values, int count) {
        if (count == 0) {
            return 0;
        }
        System.arraycopy(values, 0, scratch, 0, count);
        Arrays.sort(scratch, 0, count);
        int index = (int) Math.ceil(percentile * count) - 1;
        return scratch[Math.max(0, Math.min(count - 1, index))];
    }
}
