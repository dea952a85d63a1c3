package dev.stagger.internal;

import java.util.concurrent.atomic.AtomicLong;

/**
 * Additive increase, multiplicative decrease on a latency threshold and on drops, as TCP Reno does
 * on packet loss. A sample slower than the threshold, or a drop ({@link #onDrop}), multiplies the
 * limit by the backoff ratio, once per round trip: of several slow requests admitted before the
 * last decrease, none decreases it again. A fast sample adds {@code 1 / limit} while at least half
 * of the limit was in use as it started. The limit stays within [min, max].
 *
 * <p>Lock-free: the limit is a double in an {@link AtomicLong} changed by compare-and-set, and the
 * time of the last decrease is claimed by compare-and-set too, so of several slow requests that
 * were in flight together exactly one decreases the limit. Increases racing with each other are
 * all applied (each retries its CAS).
 */
public final class AimdAlgorithm implements LimitAlgorithm {
    private final long thresholdNanos;
    private final double minLimit;
    private final double maxLimit;
    private final double backoffRatio;
    private final AtomicLong limitBits;
    private final AtomicLong lastDecreaseNanos = new AtomicLong(Long.MIN_VALUE);
    private volatile boolean decreasedOnce;

    /**
     * @param thresholdNanos a sample slower than this decreases the limit ({@link Long#MAX_VALUE}: only drops do)
     * @param backoffRatio what a decrease multiplies the limit by, in (0, 1)
     */
    public AimdAlgorithm(long thresholdNanos, int initialLimit, int minLimit, int maxLimit, double backoffRatio) {
        this.thresholdNanos = thresholdNanos;
        this.minLimit = minLimit;
        this.maxLimit = maxLimit;
        this.backoffRatio = backoffRatio;
        this.limitBits = new AtomicLong(Double.doubleToRawLongBits(initialLimit));
    }

    @Override
    public int limit() {
        return (int) Double.longBitsToDouble(limitBits.get());
    }

    @Override
    public int onSample(long startNanos, long endNanos, int inFlight) {
        if (endNanos - startNanos > thresholdNanos) {
            return onDrop(startNanos, endNanos);
        }
        if (2.0 * inFlight >= Double.longBitsToDouble(limitBits.get())) {
            increase();
        }
        return limit();
    }

    @Override
    public int onDrop(long startNanos, long endNanos) {
        long last = lastDecreaseNanos.get();
        // once per round trip: requests admitted before the last decrease already counted in it
        boolean newer = !decreasedOnce || startNanos - last >= 0;
        if (newer && lastDecreaseNanos.compareAndSet(last, endNanos)) {
            decreasedOnce = true;
            decrease();
        }
        return limit();
    }

    private void decrease() {
        long bits;
        double next;
        do {
            bits = limitBits.get();
            next = Math.max(minLimit, Double.longBitsToDouble(bits) * backoffRatio);
        } while (!limitBits.compareAndSet(bits, Double.doubleToRawLongBits(next)));
    }

    private void increase() {
        long bits;
        double current;
        do {
            bits = limitBits.get();
            current = Double.longBitsToDouble(bits);
            if (current >= maxLimit) {
                return;
            }
        } while (!limitBits.compareAndSet(bits, Double.doubleToRawLongBits(Math.min(maxLimit, current + 1.0 / current))));
    }
}
