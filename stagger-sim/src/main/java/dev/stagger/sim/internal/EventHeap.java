package dev.stagger.sim.internal;

import java.util.Arrays;

/**
 * A min-heap of events ordered by due time, then sequence number: 4-ary, kept in primitive arrays
 * (due times and sequence numbers side by side, so a sift compares numbers in a few cache lines
 * instead of dereferencing an object per comparison). {@link EventQueue} keeps the events beyond
 * its wheel's horizon here. Not thread-safe.
 */
final class EventHeap {
    private static final int ARITY = 4;

    private long[] due = new long[16];
    private long[] seq = new long[16];
    private Object[] items = new Object[16];
    private int size;

    boolean isEmpty() {
        return size == 0;
    }

    int size() {
        return size;
    }

    /** Due time of the earliest event; the heap must not be empty. */
    long firstDue() {
        return due[0];
    }

    /** Sequence number of the earliest event; the heap must not be empty. */
    long firstSeq() {
        return seq[0];
    }

    void add(long d, long s, Object item) {
        if (size == items.length) {
            int capacity = size * 2;
            due = Arrays.copyOf(due, capacity);
            seq = Arrays.copyOf(seq, capacity);
            items = Arrays.copyOf(items, capacity);
        }
        int i = size++;
        while (i > 0) { // sift up
            int parent = (i - 1) / ARITY;
            long pd = due[parent];
            if (pd < d || (pd == d && seq[parent] < s)) {
                break;
            }
            due[i] = pd;
            seq[i] = seq[parent];
            items[i] = items[parent];
            i = parent;
        }
        due[i] = d;
        seq[i] = s;
        items[i] = item;
    }

    /** Removes the earliest event and returns it; the heap must not be empty. */
    Object removeFirst() {
        Object first = items[0];
        int last = --size;
        long d = due[last];
        long s = seq[last];
        Object item = items[last];
        items[last] = null;
        if (last == 0) {
            return first;
        }
        int i = 0;
        while (true) { // sift the last element down from the root
            int child = i * ARITY + 1;
            if (child >= last) {
                break;
            }
            int end = Math.min(child + ARITY, last);
            int min = child;
            long md = due[child];
            long ms = seq[child];
            for (int c = child + 1; c < end; c++) {
                long cd = due[c];
                if (cd < md || (cd == md && seq[c] < ms)) {
                    min = c;
                    md = cd;
                    ms = seq[c];
                }
            }
            if (d < md || (d == md && s < ms)) {
                break;
            }
            due[i] = md;
            seq[i] = ms;
            items[i] = items[min];
            i = min;
        }
        due[i] = d;
        seq[i] = s;
        items[i] = item;
        return first;
    }
}
