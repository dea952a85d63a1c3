package dev.stagger.internal;

import org.jspecify.annotations.Nullable;

/**
 * A hierarchical timing wheel: insert and cancel in O(1), memory freed at once on cancel, and no
 * clock of its own — the owner passes the time in, so a test drives it with fixed readings or a
 * {@link dev.stagger.testing.VirtualClock} and gets the same firings every run.
 *
 * <h2>Structure</h2>
 * Time is cut into ticks of {@value #TICK_NANOS} ns (2^20 ns, about 1.05 ms), counted from the
 * origin reading given to the constructor, so a monotonic clock that wraps past
 * {@code Long.MAX_VALUE} (only differences of {@code System.nanoTime()} mean anything) is
 * handled. Eight levels of 64 slots: level {@code i} holds entries due between 64^i and 64^(i+1)
 * ticks ahead (level 0: the next 67 ms; level 3: up to 4.9 h; level 7: the remaining 292 years).
 * Each slot is a circular doubly linked list behind a sentinel, so an entry unlinks itself in
 * O(1); one 64-bit mask per level says which slots hold anything, so finding the next event
 * costs eight bit operations, whatever the number of entries. When time reaches a slot of level
 * {@code i >= 1}, its entries move down to the level their remaining time calls for (an entry
 * moves at most seven times in its life, a 10-minute wait three times), and level-0 entries whose
 * tick has come are handed back to the owner.
 *
 * <h2>Accuracy</h2>
 * An entry is due at the first tick boundary at or after its deadline (or at the next tick, if
 * that boundary was already processed when it was added: a zero delay), and {@link #expire(long)}
 * returns it once the time passed in reaches that tick: never before the deadline, and at most one
 * tick (1.05 ms) after it, plus however late the owner calls {@code expire}. Entries due
 * in different ticks come back in tick order; entries due in the same tick in no defined order.
 *
 * <p>Not thread-safe: the owner serializes every call (the system clock's timer does so under one
 * lock). Per entry it keeps nothing beyond the {@link Node} fields the entry itself carries.
 */
public final class TimerWheel {
    /** Tick length as a power of two, so turning nanoseconds into ticks is a shift. */
    public static final int TICK_SHIFT = 20;
    public static final long TICK_NANOS = 1L << TICK_SHIFT;
    private static final int SLOT_BITS = 6;
    private static final int SLOTS = 1 << SLOT_BITS;
    private static final int LEVELS = 8;

    /**
     * What the wheel links: subclasses add the payload. A node is in at most one wheel at a time;
     * {@code prev != null} while it is in one.
     */
    public static class Node {
        @Nullable Node next;
        @Nullable Node prev;
        long deadlineTick;

        /** True while the node waits in a wheel (neither expired nor removed). */
        public final boolean isScheduled() {
            return prev != null;
        }

        /** The node after this one in a chain returned by {@link #expire(long)}. */
        public final @Nullable Node nextExpired() {
            return next;
        }
    }

    private final long originNanos;
    private final Node[] slots = new Node[LEVELS * SLOTS];
    private final long[] occupied = new long[LEVELS];
    /** Nodes taken from the slots the current tick visits and not yet moved on (see {@link #expire(long, int)}). */
    private final Node moving = sentinel();
    /** The last tick processed: everything due at or before it has been handed out. */
    private long current;
    private boolean behind;
    private int size;
    private @Nullable Node expiredHead;
    private @Nullable Node expiredTail;

    /** @param originNanos a reading of the owner's clock at or before every time later passed in */
    public TimerWheel(long originNanos) {
        this.originNanos = originNanos;
        for (int i = 0; i < slots.length; i++) {
            slots[i] = sentinel();
        }
    }

    private static Node sentinel() {
        Node sentinel = new Node();
        sentinel.next = sentinel;
        sentinel.prev = sentinel;
        return sentinel;
    }

    /** Number of nodes waiting. */
    public int size() {
        return size;
    }

    /**
     * Adds {@code node}, due {@code delayNanos} after {@code nowNanos} (a negative delay counts as
     * zero; a delay past the end of time never comes due).
     *
     * @return the node's deadline as a tick, to compare with {@link #nextEventTick()}
     * @throws IllegalStateException if the node is already in a wheel
     */
    public long add(Node node, long nowNanos, long delayNanos) {
        if (node.prev != null) {
            throw new IllegalStateException("node is already scheduled");
        }
        long now = Math.max(0, nowNanos - originNanos);
        long due = now + Math.max(0, delayNanos);
        if (due < now) {
            due = Long.MAX_VALUE;
        }
        long tick = (due >>> TICK_SHIFT) + ((due & (TICK_NANOS - 1)) != 0 ? 1 : 0);
        node.deadlineTick = tick;
        if (size == 0) {
            current = Math.max(current, now >>> TICK_SHIFT); // nothing waits, so no tick needs processing
        }
        insert(node);
        size++;
        return tick;
    }

    /** Takes {@code node} out of the wheel; false if it was not in it (expired, removed, never added). */
    public boolean remove(Node node) {
        if (node.prev == null) {
            return false;
        }
        unlink(node);
        size--;
        return true; // a slot left empty keeps its mask bit until visited: one needless visit at most
    }

    /**
     * Processes every tick up to {@code nowNanos} and returns the nodes that came due, chained by
     * {@link Node#nextExpired()} (null when none). They are out of the wheel when returned.
     */
    public @Nullable Node expire(long nowNanos) {
        Node due;
        Node head = null;
        Node tail = null;
        do {
            due = expire(nowNanos, Integer.MAX_VALUE);
            if (due != null) {
                if (tail == null) {
                    head = due;
                } else {
                    tail.next = due;
                }
                tail = due;
                while (tail.next != null) {
                    tail = tail.next;
                }
            }
        } while (isBehind());
        return head;
    }

    /**
     * As {@link #expire(long)}, but moves or hands out at most about {@code maxNodes} nodes, so an
     * owner holding a lock can release it between batches: a slot of a million far entries coming
     * down a level does not block every add and cancel for the whole move. While
     * {@link #isBehind()} is true, call again (with the same or a later time) to go on; nodes not
     * yet moved are still in the wheel and can be removed as usual.
     */
    public @Nullable Node expire(long nowNanos, int maxNodes) {
        long target = (nowNanos - originNanos) >> TICK_SHIFT;
        int budget = maxNodes - drainMoving(maxNodes);
        while (budget > 0 && current < target) {
            if (size == 0) {
                current = target;
                break;
            }
            long tick = nextEventTick();
            if (tick > target) {
                current = target;
                break;
            }
            current = tick;
            processTick(tick);
            budget -= drainMoving(budget);
        }
        behind = moving.next != moving || current < target;
        Node head = expiredHead;
        expiredHead = null;
        expiredTail = null;
        return head;
    }

    /**
     * True when the last {@link #expire(long, int)} ran out of its batch before processing every
     * tick up to the time it was given (possibly in the middle of moving a slot).
     */
    public boolean isBehind() {
        return behind;
    }

    /**
     * The next tick at which {@link #expire(long)} has anything to do (fire or move entries), or
     * {@code Long.MAX_VALUE} when the wheel is empty. It may be earlier than any deadline: a
     * far entry is moved down a level on the way.
     */
    public long nextEventTick() {
        if (size == 0) {
            return Long.MAX_VALUE;
        }
        if (moving.next != moving) {
            return current;
        }
        long next = Long.MAX_VALUE;
        for (int level = 0; level < LEVELS; level++) {
            long bits = occupied[level];
            if (bits == 0) {
                continue;
            }
            int shift = level * SLOT_BITS;
            long index = (current >>> shift) + 1; // the first visit of this level still to come
            int skip = Long.numberOfTrailingZeros(Long.rotateRight(bits, (int) (index & (SLOTS - 1))));
            long tick = (index + skip) << shift;
            if (tick < next) {
                next = tick;
            }
        }
        return next;
    }

    /** Nanoseconds from {@code nowNanos} until {@code tick} begins (0 if it has begun). */
    public long nanosUntil(long tick, long nowNanos) {
        if (tick >= Long.MAX_VALUE >>> TICK_SHIFT) {
            return Long.MAX_VALUE;
        }
        return Math.max(0, (tick << TICK_SHIFT) - (nowNanos - originNanos));
    }

    /** Queues the slots {@code tick} visits (on every level it is a boundary of) for moving. */
    private void processTick(long tick) {
        for (int level = LEVELS - 1; level >= 1; level--) {
            int shift = level * SLOT_BITS;
            if ((tick & ((1L << shift) - 1)) == 0) {
                takeSlot(level, (int) ((tick >>> shift) & (SLOTS - 1)));
            }
        }
        takeSlot(0, (int) (tick & (SLOTS - 1)));
    }

    /**
     * Splices one slot's list onto the moving list in O(1). Each node there is then either due
     * (at or before {@link #current}) or goes back in at the level its remaining time calls for,
     * which is never a slot the current tick is visiting: so the slots can be emptied in any order.
     */
    private void takeSlot(int level, int slot) {
        long bit = 1L << slot;
        if ((occupied[level] & bit) == 0) {
            return;
        }
        occupied[level] &= ~bit;
        Node sentinel = slots[level * SLOTS + slot];
        if (sentinel.next == sentinel) {
            return;
        }
        Node first = linked(sentinel.next);
        Node last = linked(sentinel.prev);
        sentinel.next = sentinel;
        sentinel.prev = sentinel;
        Node tail = linked(moving.prev);
        tail.next = first;
        first.prev = tail;
        last.next = moving;
        moving.prev = last;
    }

    /** Moves up to {@code max} nodes off the moving list; returns how many it moved. */
    private int drainMoving(int max) {
        int moved = 0;
        while (moved < max && moving.next != moving) {
            Node n = linked(moving.next);
            unlink(n);
            moved++;
            if (n.deadlineTick <= current) {
                size--;
                if (expiredTail == null) {
                    expiredHead = n;
                } else {
                    expiredTail.next = n;
                }
                expiredTail = n;
            } else {
                insert(n);
            }
        }
        return moved;
    }

    private void insert(Node node) {
        long tick = Math.max(node.deadlineTick, current + 1);
        long ahead = tick - current;
        int level = ahead < SLOTS ? 0 : Math.min(LEVELS - 1, (63 - Long.numberOfLeadingZeros(ahead)) / SLOT_BITS);
        int slot = (int) ((tick >>> (level * SLOT_BITS)) & (SLOTS - 1));
        Node sentinel = slots[level * SLOTS + slot];
        Node last = linked(sentinel.prev);
        node.prev = last;
        node.next = sentinel;
        last.next = node;
        sentinel.prev = node;
        occupied[level] |= 1L << slot;
    }

    private static void unlink(Node node) {
        Node prev = linked(node.prev);
        Node next = linked(node.next);
        prev.next = next;
        next.prev = prev;
        node.prev = null;
        node.next = null;
    }

    /** A link of a node in one of the wheel's lists: never null, as a sentinel closes every list into a ring. */
    @SuppressWarnings("NullAway") // a node in a ring (a slot's or the moving list) is linked both ways
    private static Node linked(@Nullable Node link) {
        return link;
    }
}
