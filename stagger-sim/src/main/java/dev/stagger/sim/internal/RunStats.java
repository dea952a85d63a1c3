package dev.stagger.sim.internal;

import dev.stagger.EndReason;
import java.util.EnumMap;
import java.util.Map;

/**
 * What one run measured. Mutable while the run goes on, read once it is over; one run is
 * simulated on one thread.
 */
public final class RunStats {
    public long calls;
    public long wasted;
    public long completionNanos;
    public long drainNanos;
    public int peakBucket;
    public int[] loadBuckets = new int[0];
    public long arrivalsWhileDown;
    public long started;
    public long succeeded;
    public long gaveUp;
    public long events;
    public final Map<EndReason, Long> endReasons = new EnumMap<>(EndReason.class);
    public final LongList callDurations = new LongList();

    public void ended(EndReason reason) {
        endReasons.merge(reason, 1L, Long::sum);
    }
}
