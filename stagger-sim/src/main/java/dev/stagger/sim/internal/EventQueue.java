package dev.stagger.sim.internal;

import java.util.Arrays;

/**
 * The pending events of one run, taken out strictly by due time and, among equal due times, in
 * the order they were added — the order of {@link dev.stagger.testing.VirtualClock}.
 *
 * <p>A calendar queue. Time is cut into ticks of {@code 2^}{@value #TICK_SHIFT} ns (65.5 µs);
 * a wheel of {@value #SLOTS} buckets covers the next ~4.3 s, and a heap ({@link EventHeap})
 * holds anything later. A bucket is a linked list of events threaded through one slab of
 * parallel arrays (due time, event, next), so adding is an append that touches a few hot
 * arrays, and a freed slot is reused at once. When time reaches a bucket, its events are moved
 * into a small sorted array and read from there in order. A simulation adds each event at most a
 * few seconds ahead (network delays, backoff waits up to their cap), so nearly every event costs
 * an append, a short insertion sort and a read, instead of a heap's O(log n) sifts, whose
 * unpredictable branches and scattered reads dominated runs with thousands of clients.
 *
 * <p>Why the order is exact: events are added in sequence order, so a bucket's list is in
 * sequence order, except that events moved in from the heap — which come first, as the heap
 * hands a bucket its events when the wheel first reaches it, before anything can be added to it
 * directly — arrive in (due, sequence) order. Sorting a bucket stably by due time therefore
 * yields (due, sequence) order. Not thread-safe: one run, one thread.
 */
final class EventQueue {
    static final int TICK_SHIFT = 16;
    static final int SLOTS = 1 << 16;
    private static final int MASK = SLOTS - 1;
    private static final int INSERTION_SORT_MAX = 48;

    // the buckets: head and tail slab slot per tick (0 = empty), and a bitmap of non-empty ones
    private final int[] heads = new int[SLOTS];
    private final int[] tails = new int[SLOTS];
    private final long[] occupied = new long[SLOTS / 64];
    private long cursor;
    private int inBuckets;

    // the slab: slot 0 unused, so that 0 can mean "none"
    private long[] slabDue = new long[1024];
    private Object[] slabItem = new Object[1024];
    private int[] slabNext = new int[1024];
    private int slabUsed = 1;
    private int free;

    // the events of the cursor's tick, sorted, read from currentRead
    private long[] currentDue = new long[64];
    private Object[] currentItem = new Object[64];
    private int currentRead;
    private int currentSize;

    private final EventHeap later = new EventHeap();
    private long sequence;
    private long takenDue;

    /** Adds {@code item}, due at {@code due}, which must not be before the last event taken. */
    void add(long due, Object item) {
        long seq = sequence++;
        long tick = due >>> TICK_SHIFT;
        if (tick - cursor >= SLOTS) {
            later.add(due, seq, item);
        } else if (tick == cursor) {
            insertCurrent(due, item);
        } else {
            append(tick, due, item);
        }
    }

    /** Whether no event is left. */
    boolean isEmpty() {
        return currentRead == currentSize && inBuckets == 0 && later.isEmpty();
    }

    /** Due time of the earliest event; the queue must not be empty. */
    long firstDue() {
        moveToFirst();
        return currentDue[currentRead];
    }

    /** Removes the earliest event and returns it; {@link #takenDue()} is then its due time. */
    Object take() {
        moveToFirst();
        takenDue = currentDue[currentRead];
        Object item = currentItem[currentRead];
        currentItem[currentRead++] = null;
        return item;
    }

    /** The due time of the event last returned by {@link #take()}. */
    long takenDue() {
        return takenDue;
    }

    /** Makes the earliest event the next one in the current array; the queue must not be empty. */
    private void moveToFirst() {
        while (currentRead == currentSize) {
            currentRead = 0;
            currentSize = 0;
            if (inBuckets == 0) {
                if (later.isEmpty()) {
                    throw new IllegalStateException("no event left");
                }
                cursor = later.firstDue() >>> TICK_SHIFT;
            } else {
                cursor = nextOccupiedTick();
            }
            while (!later.isEmpty() && (later.firstDue() >>> TICK_SHIFT) - cursor < SLOTS) {
                long due = later.firstDue();
                append(due >>> TICK_SHIFT, due, later.removeFirst());
            }
            drainCursorBucket();
        }
    }

    /** Moves the cursor's bucket into the current array, sorted stably by due time. */
    private void drainCursorBucket() {
        int index = (int) (cursor & MASK);
        int slot = heads[index];
        if (slot == 0) {
            return;
        }
        heads[index] = 0;
        occupied[index >>> 6] &= ~(1L << (index & 63));
        int n = 0;
        while (slot != 0) {
            if (n == currentItem.length) {
                currentDue = Arrays.copyOf(currentDue, n * 2);
                currentItem = Arrays.copyOf(currentItem, n * 2);
            }
            currentDue[n] = slabDue[slot];
            currentItem[n] = slabItem[slot];
            n++;
            int next = slabNext[slot];
            slabItem[slot] = null;
            slabNext[slot] = free;
            free = slot;
            slot = next;
        }
        currentSize = n;
        inBuckets -= n;
        if (n <= INSERTION_SORT_MAX) {
            insertionSort(0, n);
        } else {
            mergeSort(n);
        }
    }

    /** Stable: equal due times keep their order. */
    private void insertionSort(int from, int to) {
        long[] due = currentDue;
        Object[] items = currentItem;
        for (int i = from + 1; i < to; i++) {
            long d = due[i];
            if (due[i - 1] <= d) {
                continue;
            }
            Object item = items[i];
            int j = i - 1;
            while (j >= from && due[j] > d) {
                due[j + 1] = due[j];
                items[j + 1] = items[j];
                j--;
            }
            due[j + 1] = d;
            items[j + 1] = item;
        }
    }

    /** Stable bottom-up merge sort of a large bucket (a burst of events in one tick). */
    private void mergeSort(int n) {
        for (int from = 0; from < n; from += INSERTION_SORT_MAX) {
            insertionSort(from, Math.min(n, from + INSERTION_SORT_MAX));
        }
        long[] srcDue = currentDue;
        Object[] srcItem = currentItem;
        long[] dstDue = new long[srcDue.length];
        Object[] dstItem = new Object[srcItem.length];
        for (int width = INSERTION_SORT_MAX; width < n; width *= 2) {
            for (int lo = 0; lo < n; lo += 2 * width) {
                int mid = Math.min(lo + width, n);
                int hi = Math.min(lo + 2 * width, n);
                int a = lo;
                int b = mid;
                for (int k = lo; k < hi; k++) {
                    int from = b >= hi || (a < mid && srcDue[a] <= srcDue[b]) ? a++ : b++;
                    dstDue[k] = srcDue[from];
                    dstItem[k] = srcItem[from];
                }
            }
            long[] swapDue = srcDue;
            srcDue = dstDue;
            dstDue = swapDue;
            Object[] swapItem = srcItem;
            srcItem = dstItem;
            dstItem = swapItem;
        }
        currentDue = srcDue;
        currentItem = srcItem;
    }

    /** Inserts into the current array after every event due at or before {@code due} (all older). */
    private void insertCurrent(long due, Object item) {
        if (currentSize == currentItem.length) {
            currentDue = Arrays.copyOf(currentDue, currentSize * 2);
            currentItem = Arrays.copyOf(currentItem, currentSize * 2);
        }
        int lo = currentRead;
        int hi = currentSize;
        while (lo < hi) {
            int mid = (lo + hi) >>> 1;
            if (currentDue[mid] <= due) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        int moved = currentSize - lo;
        if (moved > 0) {
            System.arraycopy(currentDue, lo, currentDue, lo + 1, moved);
            System.arraycopy(currentItem, lo, currentItem, lo + 1, moved);
        }
        currentDue[lo] = due;
        currentItem[lo] = item;
        currentSize++;
    }

    private void append(long tick, long due, Object item) {
        int slot = free;
        if (slot != 0) {
            free = slabNext[slot];
        } else {
            if (slabUsed == slabItem.length) {
                int capacity = slabUsed * 2;
                slabDue = Arrays.copyOf(slabDue, capacity);
                slabItem = Arrays.copyOf(slabItem, capacity);
                slabNext = Arrays.copyOf(slabNext, capacity);
            }
            slot = slabUsed++;
        }
        slabDue[slot] = due;
        slabItem[slot] = item;
        slabNext[slot] = 0;
        int index = (int) (tick & MASK);
        if (heads[index] == 0) {
            heads[index] = slot;
            occupied[index >>> 6] |= 1L << (index & 63);
        } else {
            slabNext[tails[index]] = slot;
        }
        tails[index] = slot;
        inBuckets++;
    }

    /** The first tick after the cursor whose bucket holds events; some bucket must hold one. */
    private long nextOccupiedTick() {
        int start = (int) ((cursor + 1) & MASK);
        for (int step = 0; step < SLOTS; ) {
            int index = (start + step) & MASK;
            long word = occupied[index >>> 6] >>> (index & 63);
            if (word != 0) {
                return cursor + 1 + step + Long.numberOfTrailingZeros(word);
            }
            step += 64 - (index & 63);
        }
        throw new IllegalStateException("the wheel counts " + inBuckets + " events but no bucket holds one");
    }
}
