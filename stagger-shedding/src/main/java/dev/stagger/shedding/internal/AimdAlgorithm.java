package dev.stagger.shedding.internal;

import dev.stagger.internal.Checks;
import dev.stagger.shedding.AimdLimit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * {@link AimdLimit} at run time. Lock-free: the limit is a double in an {@link AtomicLong}
 * changed by compare-and-set, and the time of the last decrease is claimed by compare-and-set
 * too, so of several slow requests that were in flight together exactly one decreases the limit.
 * Increases racing with each other are all applied (each retries its CAS).
 */
final class AimdAlgorithm implements LimitAlgorithm {
    private final long thresholdNanos;
    private final double minLimit;
    private final double maxLimit;
    private final double backoffRatio;
    private final AtomicLong limitBits;
    private final AtomicLong lastDecreaseNanos = new AtomicLong(Long.MIN_VALUE);
    private volatile boolean decreasedOnce;

    AimdAlgorithm(AimdLimit config) {
        this.thresholdNanos = Checks.nanos(config.latencyThreshold());
        this.minLimit = config.minLimit();
        this.maxLimit = config.maxLimit();
        this.backoffRatio = config.backoffRatio();
        this.limitBits = new AtomicLong(Double.doubleToRawLongBits(config.initialLimit()));
    }

    @Override
    public int limit() {
        return (int) Double.longBitsToDouble(limitBits.get());
    }

    @Override
    public int onSample(long startNanos, long endNanos, int inFlight) {
        if (endNanos - startNanos > thresholdNanos) {
            long last = lastDecreaseNanos.get();
            // once per round trip: requests admitted before the last decrease already counted in it
            boolean newer = !decreasedOnce || startNanos - last >= 0;
            if (newer && lastDecreaseNanos.compareAndSet(last, endNanos)) {
                decreasedOnce = true;
                decrease();
            }
        } else if (2.0 * inFlight >= Double.longBitsToDouble(limitBits.get())) {
            increase();
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
