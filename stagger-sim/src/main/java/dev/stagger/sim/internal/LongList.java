package dev.stagger.sim.internal;

import java.util.Arrays;

/** A growable array of longs, for pooling many call durations without boxing. */
public final class LongList {
    private long[] values = new long[256];
    private int size;

    public void add(long value) {
        if (size == values.length) {
            values = Arrays.copyOf(values, size * 2);
        }
        values[size++] = value;
    }

    public void addAll(LongList other) {
        for (int i = 0; i < other.size; i++) {
            add(other.values[i]);
        }
    }

    public int size() {
        return size;
    }

    /** The nearest-rank percentile {@code p} in [0, 100]; 0 when empty. Sorts the list. */
    public long percentile(double p) {
        if (size == 0) {
            return 0;
        }
        Arrays.sort(values, 0, size);
        int rank = (int) Math.ceil(p / 100.0 * size);
        return values[Math.max(0, Math.min(size - 1, rank - 1))];
    }
}
