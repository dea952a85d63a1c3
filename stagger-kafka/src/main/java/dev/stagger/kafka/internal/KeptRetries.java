package dev.stagger.kafka.internal;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.PriorityQueue;
import java.util.Set;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.header.Headers;
import org.jspecify.annotations.Nullable;

/**
 * One {@link Lane}'s retries kept in memory ({@link MemoryRetries}): those its draining thread
 * kept and settled since it last published its committable offset, those waiting for their due
 * time, and those due, waiting for the draining thread. Not thread-safe: each method says whether
 * it runs under its lane's lock or on the lane's draining thread; a retry's place in
 * {@link MemoryRetries} is taken when it is kept and given back when it leaves (handled again, or
 * sent to its delay topic).
 */
final class KeptRetries {
    /** A retry kept in memory: its record's next attempt, with the headers its copy would carry, due at {@link #dueAt}. */
    static final class Kept extends ConsumerRecord<byte[], byte[]> {
        final long dueAt;

        Kept(ConsumerRecord<byte[], byte[]> r, Headers next, long dueAt) {
            super(r.topic(), r.partition(), r.offset(), r.timestamp(), r.timestampType(), r.serializedKeySize(),
                    r.serializedValueSize(), r.key(), r.value(), next, r.leaderEpoch());
            this.dueAt = dueAt;
        }
    }

    private final MemoryRetries places;
    /** Under the lock: not yet due, soonest first. */
    private final PriorityQueue<Kept> waiting = new PriorityQueue<>((a, b) -> Long.compare(a.dueAt, b.dueAt));
    /** Under the lock: due, waiting for the draining thread. */
    private final ArrayDeque<Kept> due = new ArrayDeque<>();
    /** Draining thread: kept since its last publication. */
    private final List<Kept> keptSince = new ArrayList<>();
    /** Draining thread: the offsets of kept retries it settled since its last publication. */
    private final List<Long> settledSince = new ArrayList<>();

    KeptRetries(MemoryRetries places) {
        this.places = places;
    }

    /** Draining thread: keeps {@code record}'s next attempt when a wait of {@code waitMillis} may be kept and a place is free. */
    boolean keep(ConsumerRecord<byte[], byte[]> record, Headers next, long dueAt, long waitMillis) {
        if (!places.take(waitMillis)) {
            return false;
        }
        keptSince.add(new Kept(record, next, dueAt));
        return true;
    }

    /** Draining thread: the kept retry at {@code offset} settled; it stops holding the offset back at the next publication. */
    void settled(long offset) {
        settledSince.add(offset);
    }

    /**
     * Under the lock, by the draining thread, before its committable offset is published: what it
     * kept and settled since the last call is entered in {@code unacked} (the offsets the lane does
     * not commit past) and this lane's waiting retries; when {@code revoked}, what it kept goes to
     * {@code park} instead, to be sent to its delay topic after the lock.
     *
     * @return the soonest due time added, or {@link Long#MAX_VALUE}
     */
    long publish(Set<Long> unacked, boolean revoked, List<Kept> park) {
        if (!settledSince.isEmpty()) {
            unacked.removeAll(settledSince);
            settledSince.clear();
        }
        long soonest = Long.MAX_VALUE;
        for (Kept k : keptSince) {
            unacked.add(k.offset());
            if (revoked) {
                park.add(k);
                places.giveBack(1);
            } else {
                waiting.add(k);
                soonest = Math.min(soonest, k.dueAt);
            }
        }
        keptSince.clear();
        return soonest;
    }

    /** Under the lock: the waiting retries due by {@code now} become due; returns whether any is due. */
    boolean moveDue(long now) {
        for (Kept head; (head = waiting.peek()) != null && head.dueAt <= now; ) {
            due.add(waiting.poll());
        }
        return !due.isEmpty();
    }

    /** Under the lock: when the next waiting retry is due, or {@link Long#MAX_VALUE} when none waits. */
    long nextDue() {
        Kept head = waiting.peek();
        return head == null ? Long.MAX_VALUE : head.dueAt;
    }

    /** Under the lock: whether a retry is due. */
    boolean anyDue() {
        return !due.isEmpty();
    }

    /** Under the lock: the due retries, taken in one go (their places given back), or null when none is due. */
    @Nullable ArrayDeque<Kept> takeDue() {
        if (due.isEmpty()) {
            return null;
        }
        ArrayDeque<Kept> out = new ArrayDeque<>(due);
        due.clear();
        places.giveBack(out.size());
        return out;
    }

    /** Under the lock: every retry kept, due or not, taken out (their places given back). */
    List<Kept> takeAll() {
        if (waiting.isEmpty() && due.isEmpty()) {
            return List.of();
        }
        List<Kept> out = new ArrayList<>(due);
        out.addAll(waiting);
        due.clear();
        waiting.clear();
        places.giveBack(out.size());
        return out;
    }
}
