package dev.stagger.kafka.internal;

import dev.stagger.kafka.internal.KeptRetries.Kept;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import java.util.function.LongConsumer;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Headers;
import org.jspecify.annotations.Nullable;

/**
 * The records of one assigned partition waiting for a handler thread: handled one at a time, in
 * offset order, so the partition's committable offset is the one after the last settled record
 * (or, in key-order mode, the first record still held back, if lower). Several partitions' lanes
 * run at once on the consumer's handler threads. The poll thread adds records and reads
 * {@link #done()}; the handler thread that drains the lane settles them. Thread-safe.
 *
 * <p>Key order (a work topic's lane with a {@link KeyOrder}): a record whose key has a record in
 * retry (a copy in a delay topic, not yet settled) is held back, in order, instead of being
 * handled; when the retry settles for good ({@link #release}), the key's held records go back to
 * the head of the lane, oldest first. A record past the bounds stops the lane until a release.
 *
 * <p>Retries in memory (with {@link MemoryRetries}, without key order): a failed record whose
 * next attempt is due soon enough is kept here, by due time, instead of going to a delay topic;
 * the poll thread hands the due ones to the handler ({@link #takeDue}), before the lane's next
 * records. Meanwhile the partition is not committed past the record, as for a copy on its way.
 * A revoked or stopping lane sends the retries it keeps to their delay topics, for what remains of
 * their waits, before its offset is committed ({@link #revokeAndAwait}).
 */
final class Lane implements RecordProcessor.Acks {
    /** Without key order: records handled between two publications of the committable offset. */
    static final int PUBLISH_EVERY = 64;
    final TopicPartition partition;
    /** The delay level of a delay topic's partition; -1 for the work topic's. */
    final long levelMillis;
    /** Poll thread only: the head is not due before this wall-clock time (0: nothing waits). */
    long blockedUntil;
    /** Poll thread only: the last offset committed, -1 before the first. */
    long committed = -1;

    private final Executor executor;
    private final RecordProcessor processor;
    private final BooleanSupplier closing;
    /** Told of each record settled for good (succeeded or dead-lettered), for key order; null when off. */
    private final @Nullable Consumer<ConsumerRecord<byte[], byte[]>> settled;
    /** The work topic's lane in key-order mode; null otherwise. */
    private final @Nullable KeyOrder keyOrder;
    /** Records waiting at which the poll thread pauses the partition. */
    private final int fullAt;
    /** Told when the lane, full, takes records (its partition may be resumed); any thread. */
    private final Runnable roomAgain;
    /** The retries kept in memory; null: none is (no {@link MemoryRetries}, or key order). */
    private final @Nullable KeptRetries memory;
    /** Told the due time of each retry kept in memory (the poll in progress may have to end sooner); any thread. */
    private final LongConsumer keptUntil;

    private final ReentrantLock lock = new ReentrantLock();
    private final Condition idle = lock.newCondition();
    private ArrayDeque<ConsumerRecord<byte[], byte[]>> pending = new ArrayDeque<>();
    /** Without key order: the records the draining thread took from {@link #pending} in one go (swapped with it). */
    private ArrayDeque<ConsumerRecord<byte[], byte[]>> taken = new ArrayDeque<>();
    /** Key order: the keys with a record in retry, and their later records held back, oldest first. */
    private final Map<ByteBuffer, ArrayDeque<ConsumerRecord<byte[], byte[]>>> held = new HashMap<>();
    /** Key order: the offsets of held records (also while back in {@link #pending}), not yet settled. */
    private final TreeSet<Long> unsettled = new TreeSet<>();
    private final Set<Long> released = new HashSet<>();
    /** The offsets of records whose retry's copy is on its way, not yet acknowledged: not committed past. */
    private final TreeSet<Long> unacked = new TreeSet<>();
    /** The first offset whose copy could not be produced before the consumer stopped: never committed past. */
    private long notProduced = Long.MAX_VALUE;
    private boolean draining;
    /** Key order: the head could not be held (bounds): draining waits for a release. */
    private boolean stalled;
    /** Written under the lock; read without it between the records of a batch. */
    private volatile boolean revoked;
    private long done = -1;
    /** The offset to consume again (a record that was not settled), -1 for none. */
    private volatile long rewind = -1;
    /** {@link #pending}'s size as of the latest change ({@link #unlock}). */
    private volatile int waiting;
    /** {@link #done()} as of the latest change ({@link #unlock}). */
    private volatile long committable = -1;

    Lane(TopicPartition partition, long levelMillis, Executor executor, RecordProcessor processor, BooleanSupplier closing,
         @Nullable KeyOrder keyOrder, @Nullable Consumer<ConsumerRecord<byte[], byte[]>> settled) {
        this(partition, levelMillis, executor, processor, closing, keyOrder, settled, Integer.MAX_VALUE, () -> { }, null,
                dueAt -> { });
    }

    /**
     * @param fullAt records waiting at which the poll thread pauses the partition
     * @param roomAgain told (after the lock) when the lane, holding {@code fullAt} or more records
     *     waiting, takes them for handling: the partition may be resumed at once
     * @param memory which retries wait in memory (not in key order), or null for none
     * @param keptUntil told the due time of each retry kept in memory
     */
    Lane(TopicPartition partition, long levelMillis, Executor executor, RecordProcessor processor, BooleanSupplier closing,
         @Nullable KeyOrder keyOrder, @Nullable Consumer<ConsumerRecord<byte[], byte[]>> settled, int fullAt,
         Runnable roomAgain, @Nullable MemoryRetries memory, LongConsumer keptUntil) {
        // with key order, a key's held records are released by its retry's delay topic: none is kept
        this.memory = keyOrder == null && memory != null ? new KeptRetries(memory) : null;
        this.keptUntil = keptUntil;
        this.fullAt = fullAt;
        this.roomAgain = roomAgain;
        this.partition = partition;
        this.levelMillis = levelMillis;
        this.executor = executor;
        this.processor = processor;
        this.closing = closing;
        this.keyOrder = levelMillis < 0 ? keyOrder : null;
        this.settled = settled;
    }

    /**
     * The offset after the last settled record, or the first held one, or the first whose copy is
     * not yet acknowledged, if lower: what may be committed; -1 before the first.
     */
    long done() {
        return committable;
    }

    /** Records waiting for a handler (not those a handler has taken). */
    int size() {
        return waiting;
    }

    /**
     * Every change to the lane is made under the lock and published here as the lock is released:
     * what the poll thread reads before each poll ({@link #size}, {@link #done}) it reads without
     * the lock, as of the latest change, so it never waits for a handler thread that holds it.
     */
    private void unlock() {
        waiting = pending.size();
        long d = Math.min(unsettled.isEmpty() ? done : Math.min(done, unsettled.first()), notProduced);
        committable = unacked.isEmpty() ? d : Math.min(d, unacked.first());
        lock.unlock();
    }

    /** Records held back for their key, in this lane. */
    int held() {
        lock.lock();
        try {
            return unsettled.size() - released.size();
        } finally {
            unlock();
        }
    }

    /** The offset to seek back to, once, or -1. */
    long takeRewind() {
        if (rewind < 0) {
            return -1; // read without the lock: set under it, and taken only by this (the poll) thread
        }
        lock.lock();
        try {
            long r = rewind;
            rewind = -1;
            return r;
        } finally {
            unlock();
        }
    }

    /** Adds {@code record} and starts draining unless a drain runs already. */
    void add(ConsumerRecord<byte[], byte[]> record) {
        addAll(List.of(record));
    }

    /**
     * Adds {@code records} (consecutive, in offset order) and starts draining unless a drain runs
     * already: one lock and at most one hand-off to a handler thread for a poll's records.
     */
    void addAll(List<ConsumerRecord<byte[], byte[]>> records) {
        if (records.isEmpty()) {
            return;
        }
        lock.lock();
        try {
            if (revoked || rewind >= 0) {
                return; // consumed again from the rewind point (or by the partition's next owner)
            }
            pending.addAll(records);
            if (draining || stalled) {
                return;
            }
            draining = true;
        } finally {
            unlock();
        }
        startDrain();
    }

    private void startDrain() {
        try {
            executor.execute(this::drain);
        } catch (RejectedExecutionException stopping) {
            stopDraining();
        }
    }

    /**
     * Key order: the retry of {@code key} settled for good; its held records go back to the head
     * of the lane, oldest first, and the lane drains again.
     */
    void release(byte[] key) {
        if (keyOrder == null) {
            return;
        }
        lock.lock();
        try {
            ArrayDeque<ConsumerRecord<byte[], byte[]>> records = held.remove(ByteBuffer.wrap(key));
            if (records == null || revoked) {
                return;
            }
            keyOrder.giveBack(records.size());
            for (Iterator<ConsumerRecord<byte[], byte[]>> it = records.descendingIterator(); it.hasNext(); ) {
                ConsumerRecord<byte[], byte[]> r = it.next();
                released.add(r.offset());
                pending.addFirst(r);
            }
            stalled = false;
            if (draining || pending.isEmpty()) {
                return;
            }
            draining = true;
        } finally {
            unlock();
        }
        startDrain();
    }

    /**
     * Key order: {@code keys} have a record in retry already (read from the broker when this
     * consumer was given the partition): their records are held from the first, as if this lane
     * had seen their retries start. Before the lane's first record.
     */
    void holdKeys(Set<ByteBuffer> keys) {
        if (keyOrder == null) {
            return;
        }
        lock.lock();
        try {
            for (ByteBuffer key : keys) {
                held.putIfAbsent(key, new ArrayDeque<>());
            }
        } finally {
            unlock();
        }
    }

    /**
     * Key order: when the lane stopped at a record past the bounds and there is room now (another
     * lane released its keys), drains again. Called by the poll thread before each poll.
     */
    void resumeIfRoom() {
        if (keyOrder == null) {
            return;
        }
        lock.lock();
        try {
            if (!stalled || draining || revoked) {
                return;
            }
            ConsumerRecord<byte[], byte[]> head = pending.peek();
            ArrayDeque<ConsumerRecord<byte[], byte[]>> waiting = head == null || head.key() == null ? null
                    : held.get(ByteBuffer.wrap(head.key()));
            if (waiting != null && (waiting.size() >= keyOrder.maxPerKey || keyOrder.held() >= keyOrder.maxTotal)) {
                return;
            }
            stalled = false;
            draining = true;
        } finally {
            unlock();
        }
        startDrain();
    }

    private void drain() {
        if (keyOrder == null) {
            drainInBatches();
            return;
        }
        while (true) {
            ConsumerRecord<byte[], byte[]> next;
            boolean room;
            lock.lock();
            try {
                int before = pending.size();
                next = revoked || closing.getAsBoolean() ? null : nextToHandle();
                room = before >= fullAt && pending.size() < fullAt;
                if (next == null) {
                    if (!stalled) {
                        pending.clear(); // a revoked or stopping lane's records are consumed again by whoever owns it next
                    }
                    draining = false;
                    idle.signalAll();
                    return;
                }
            } finally {
                unlock();
            }
            if (room) {
                roomAgain.run();
            }
            ByteBuffer key = next.key() != null ? ByteBuffer.wrap(next.key()) : null; // key order is on here
            if (key != null) {
                lock.lock();
                try {
                    // its key waits from before the copy is produced: the copy's settling cannot come before this
                    held.putIfAbsent(key, new ArrayDeque<>());
                } finally {
                    unlock();
                }
            }
            RecordProcessor.Outcome outcome = processor.handle(next, this);
            lock.lock();
            try {
                if (key != null && outcome != RecordProcessor.Outcome.RETRIED
                        && outcome != RecordProcessor.Outcome.DELAYED_AGAIN) {
                    ArrayDeque<ConsumerRecord<byte[], byte[]>> waiting = held.get(key);
                    if (waiting != null && waiting.isEmpty()) {
                        held.remove(key); // not in retry: its key does not wait
                    }
                }
                if (outcome != null) {
                    done = Math.max(done, next.offset() + 1);
                    if (released.remove(next.offset())) {
                        unsettled.remove(next.offset());
                    }
                } else {
                    notSettled(next.offset());
                }
            } finally {
                unlock();
            }
            tellSettled(next, outcome);
        }
    }

    /**
     * Without key order: takes all the pending records at once (one lock for them all) and handles
     * them in order, checking before each that the lane is neither revoked nor stopping; the
     * committable offset is published under the lock every {@value #PUBLISH_EVERY} records and when
     * the batch ends, so a commit never passes a record that is not settled. The records taken wait
     * outside {@link #pending}: a partition is paused on what waits there, so up to two polls'
     * worth may be in the lane.
     */
    private void drainInBatches() {
        ArrayDeque<ConsumerRecord<byte[], byte[]>> batch;
        lock.lock();
        try {
            batch = takePending();
            if (batch == null) {
                return;
            }
        } finally {
            unlock();
        }
        while (true) {
            if (!handleDue()) {
                batch.clear(); // revoked or stopping: the kept retries left go to their delay topics, the rest is consumed again
            }
            if (batch.size() >= fullAt) {
                roomAgain.run(); // taken from a full lane: its partition may be fetched again now
            }
            long settledTo = -1;
            int sincePublished = 0;
            for (ConsumerRecord<byte[], byte[]> next; (next = batch.poll()) != null; ) {
                if (revoked || closing.getAsBoolean()) {
                    break; // the rest is consumed again by whoever owns the partition next
                }
                RecordProcessor.Outcome outcome = processor.handle(next, this);
                if (outcome == null) {
                    publish(settledTo, next.offset(), false);
                    settledTo = -1;
                    break; // the rest of the batch is consumed again after the rewind
                }
                settledTo = next.offset() + 1;
                tellSettled(next, outcome);
                if (++sincePublished == PUBLISH_EVERY) {
                    sincePublished = 0;
                    publish(settledTo, -1, false);
                }
            }
            batch.clear();
            batch = publish(settledTo, -1, true);
            if (batch == null) {
                return;
            }
        }
    }

    /**
     * Handles the retries kept in memory that are due, soonest first.
     *
     * @return false when the lane is revoked or stopping (the kept retries left go to their delay
     *     topics with the revocation)
     */
    private boolean handleDue() {
        KeptRetries m = memory;
        if (m == null) {
            return true;
        }
        ArrayDeque<Kept> now;
        lock.lock();
        try {
            if (revoked || closing.getAsBoolean()) {
                return false;
            }
            now = m.takeDue(); // in one go: one lock for them all
        } finally {
            unlock();
        }
        for (Kept next; now != null && (next = now.poll()) != null; ) {
            if (revoked || closing.getAsBoolean()) {
                now.addFirst(next);
                now.forEach(k -> processor.park(k, this)); // taken before the revocation could: sent from here
                return false;
            }
            RecordProcessor.Outcome outcome = processor.handle(next, this);
            if (outcome == null) {
                acked(next, null); // to be consumed again: never committed past
            } else if (outcome != RecordProcessor.Outcome.RETRIED) {
                m.settled(next.offset());
            }
        }
        return true;
    }

    /** Under the lock, by the draining thread: {@link KeptRetries#publish}; returns the soonest due time added. */
    private long publishKept(List<Kept> park) {
        KeptRetries m = memory;
        if (m == null) {
            return Long.MAX_VALUE;
        }
        long soonest = m.publish(unacked, revoked, park);
        idle.signalAll(); // a revocation may wait for kept retries that settled
        return soonest;
    }

    /** After {@link #publishKept}, outside the lock: the poll thread hears of the soonest due time, the parked go. */
    private void afterPublish(List<Kept> park, long soonest) {
        park.forEach(k -> processor.park(k, this));
        if (soonest != Long.MAX_VALUE) {
            keptUntil.accept(soonest);
        }
    }

    /**
     * Poll thread, before each poll: the retries kept in memory that are due by {@code now} go to
     * the handler, ahead of the lane's next records.
     *
     * @return when the next retry kept in memory is due, or {@link Long#MAX_VALUE} when none is
     */
    long takeDue(long now) {
        if (memory == null) {
            return Long.MAX_VALUE;
        }
        boolean start = false;
        long next;
        lock.lock();
        try {
            if (!revoked && memory.moveDue(now) && !draining && !closing.getAsBoolean()) {
                draining = true;
                start = true;
            }
            next = memory.nextDue();
        } finally {
            unlock();
        }
        if (start) {
            startDrain();
        }
        return next;
    }

    /**
     * {@inheritDoc} Called by the draining thread only (from {@link RecordProcessor#handle}): the
     * retry is the lane's from the draining thread's next publication ({@link #publishKept}), which
     * comes before its committable offset passes the record.
     */
    @Override
    public boolean keep(ConsumerRecord<byte[], byte[]> record, Headers next, long dueAt, long waitMillis) {
        KeptRetries m = memory;
        return m != null && !revoked && m.keep(record, next, dueAt, waitMillis);
    }

    /**
     * Publishes the committable offset {@code settledTo} with what the draining thread kept and
     * settled before it ({@link #publishKept}); {@code notSettled} >= 0: that record was not
     * settled, and is consumed again ({@link #notSettled}).
     *
     * @return with {@code takeNext}, the next batch ({@link #takePending}: null when the drain
     *     ends); otherwise null
     */
    private @Nullable ArrayDeque<ConsumerRecord<byte[], byte[]>> publish(long settledTo, long notSettled, boolean takeNext) {
        List<Kept> park = new ArrayList<>(0);
        long soonest;
        ArrayDeque<ConsumerRecord<byte[], byte[]>> next = null;
        lock.lock();
        try {
            done = Math.max(done, settledTo);
            soonest = publishKept(park);
            if (notSettled >= 0) {
                notSettled(notSettled);
            }
            if (takeNext) {
                next = takePending();
            }
        } finally {
            unlock();
        }
        afterPublish(park, soonest);
        return next;
    }

    /** Under the lock: the pending records, swapped out in one go; null (and the drain ends) when none or when stopping. */
    private @Nullable ArrayDeque<ConsumerRecord<byte[], byte[]>> takePending() {
        if (revoked || closing.getAsBoolean() || pending.isEmpty() && (memory == null || !memory.anyDue())) {
            pending.clear(); // a revoked or stopping lane's records are consumed again by whoever owns it next
            draining = false;
            idle.signalAll();
            return null;
        }
        ArrayDeque<ConsumerRecord<byte[], byte[]>> batch = pending;
        pending = taken;
        taken = batch;
        return batch;
    }

    /** Under the lock: the record at {@code offset} was not settled: it is consumed again, from it (or the first held one) on. */
    private void notSettled(long offset) {
        long from = unsettled.isEmpty() ? offset : Math.min(offset, unsettled.first());
        rewind = from;
        done = Math.min(done, from); // never committed past a record to be consumed again
        pending.clear();
        dropHeld();
        unsettled.clear();
        released.clear();
    }

    /** Key order: a delay topic's record settled for good lets its key go on. */
    private void tellSettled(ConsumerRecord<byte[], byte[]> record, RecordProcessor.@Nullable Outcome outcome) {
        if (outcome != null && settled != null
                && (outcome == RecordProcessor.Outcome.SUCCEEDED || outcome == RecordProcessor.Outcome.DEAD_LETTERED)) {
            settled.accept(record);
        }
    }

    @Override
    public void sending(ConsumerRecord<byte[], byte[]> record) {
        lock.lock();
        try {
            unacked.add(record.offset());
        } finally {
            unlock();
        }
    }

    @Override
    public void acked(ConsumerRecord<byte[], byte[]> record, RecordProcessor.@Nullable Outcome outcome) {
        lock.lock();
        try {
            unacked.remove(record.offset());
            if (outcome == null) {
                notProduced = Math.min(notProduced, record.offset()); // the consumer stops: consumed again from here
            }
            idle.signalAll();
        } finally {
            unlock();
        }
        if (outcome == RecordProcessor.Outcome.DEAD_LETTERED) {
            // the retry's copy turned out unpublishable and the record was dead-lettered: its key goes on
            if (settled != null) {
                settled.accept(record); // a delay topic's record: the work topic's lane releases the key
            } else if (record.key() != null) {
                release(record.key()); // the work topic's own record (no-op without key order)
            }
        }
    }

    @Override
    public void later(Runnable task) {
        executor.execute(task);
    }

    /**
     * Under the lock: the next record to handle; records whose key waits for a retry are held back
     * on the way. Null when none is left, or when the head cannot be held (bounds): then the lane
     * is stalled until a release.
     */
    private @Nullable ConsumerRecord<byte[], byte[]> nextToHandle() {
        while (true) {
            ConsumerRecord<byte[], byte[]> head = pending.peek();
            if (head == null || keyOrder == null || head.key() == null) {
                return pending.poll();
            }
            ArrayDeque<ConsumerRecord<byte[], byte[]>> waiting = held.get(ByteBuffer.wrap(head.key()));
            if (waiting == null) {
                return pending.poll();
            }
            if (waiting.size() >= keyOrder.maxPerKey || !keyOrder.take()) {
                stalled = true; // past the bounds: the partition waits here (and is paused when full) until a release
                return null;
            }
            pending.poll();
            waiting.add(head);
            unsettled.add(head.offset());
            released.remove(head.offset());
        }
    }

    /** Under the lock: forgets the held records (consumed again from the committed offset). */
    private void dropHeld() {
        if (keyOrder != null) {
            int n = 0;
            for (ArrayDeque<ConsumerRecord<byte[], byte[]>> records : held.values()) {
                n += records.size();
            }
            keyOrder.giveBack(n);
        }
        held.clear();
        stalled = false;
    }

    private void stopDraining() {
        lock.lock();
        try {
            pending.clear();
            draining = false;
            idle.signalAll();
        } finally {
            unlock();
        }
    }

    /**
     * Stops taking records (those not started, and those held back, are dropped: the partition's
     * next owner consumes them from the committed offset) and waits up to {@code timeoutNanos} for
     * the one being handled to settle.
     *
     * <p>The retries kept in memory go to their delay topics for what remains of their waits when
     * {@code parkKept} (the revocation waits for their acknowledgements too, so the committed offset
     * passes them), or are dropped when not (the partition was lost: its next owner consumes them
     * again from the committed offset, which never passed them).
     *
     * @return true when nothing is being handled any more and every copy sent is acknowledged
     */
    boolean revokeAndAwait(long timeoutNanos, boolean parkKept) throws InterruptedException {
        List<Kept> parked;
        lock.lock();
        try {
            revoked = true;
            pending.clear();
            dropHeld();
            parked = memory == null ? List.of() : memory.takeAll();
            if (!parkKept) {
                for (Kept k : parked) {
                    unacked.remove(k.offset());
                    notProduced = Math.min(notProduced, k.offset());
                }
            }
        } finally {
            unlock();
        }
        if (parkKept) {
            for (Kept k : parked) {
                processor.park(k, this);
            }
        }
        lock.lock();
        try {
            long left = timeoutNanos;
            while (draining || !unacked.isEmpty()) { // copies on their way too: their records are committed with the rest
                if (left <= 0) {
                    return false;
                }
                left = idle.awaitNanos(left);
            }
            return true;
        } finally {
            unlock();
        }
    }
}
