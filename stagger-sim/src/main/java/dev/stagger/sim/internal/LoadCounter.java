package dev.stagger.sim.internal;

import java.util.Arrays;

/** Counts requests arriving at the server per fixed-width time bucket. */
public final class LoadCounter {
    private final long bucketNanos;
    private int[] counts = new int[128];
    private int used;

    public LoadCounter(long bucketNanos) {
        this.bucketNanos = bucketNanos;
    }

    public void record(long atNanos) {
        int bucket = (int) Math.min(Integer.MAX_VALUE - 8, atNanos / bucketNanos);
        if (bucket >= counts.length) {
            counts = Arrays.copyOf(counts, Math.max(bucket + 1, counts.length * 2));
        }
        counts[bucket]++;
        used = Math.max(used, bucket + 1);
    }

    /** Counts from time zero up to the last bucket that saw a request. */
    public int[] counts() {
        return Arrays.copyOf(counts, used);
    }

    public int peak() {
        int peak = 0;
        for (int i = 0; i < used; i++) {
            peak = Math.max(peak, counts[i]);
        }
        return peak;
    }
}
