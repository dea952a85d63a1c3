package dev.stagger.kafka.internal;

import java.util.ArrayDeque;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.BooleanSupplier;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.TopicPartition;

/**
 * The records of one assigned partition waiting for a handler thread: handled one at a time, in
 * offset order, so the partition's committable offset is simply the one after the last settled
 * record. Several partitions' lanes run at once on the consumer's handler threads. The poll
 * thread adds records and reads {@link #done()}; the handler thread that drains the lane settles
 * them. Thread-safe.
 */
final class Lane {
    final TopicPartition partition;
    /** The delay level of a delay topic's partition; -1 for the work topic's. */
    final long levelMillis;
    /** Poll thread only: the head is not due before this wall-clock time (0: nothing waits). */
    long blockedUntil;
    /** Poll thread only: the last offset committed, -1 before the first. */
    long committed = -1;

    private final ReentrantLock lock = new ReentrantLock();
    private final Condition idle = lock.newCondition();
    private final ArrayDeque<ConsumerRecord<byte[], byte[]>> pending = new ArrayDeque<>();
    private boolean draining;
    private boolean revoked;
    private volatile long done = -1;
    /** The offset to consume again (a record that was not settled), -1 for none. */
    private long rewind = -1;

    Lane(TopicPartition partition, long levelMillis) {
        this.partition = partition;
        this.levelMillis = levelMillis;
    }

    /** The offset after the last settled record: what may be committed; -1 before the first. */
    long done() {
        return done;
    }

    int size() {
        lock.lock();
        try {
            return pending.size();
        } finally {
            lock.unlock();
        }
    }

    /** The offset to seek back to, once, or -1. */
    long takeRewind() {
        lock.lock();
        try {
            long r = rewind;
            rewind = -1;
            return r;
        } finally {
            lock.unlock();
        }
    }

    /** Adds {@code record} and starts draining on {@code executor} unless a drain runs already. */
    void add(ConsumerRecord<byte[], byte[]> record, Executor executor, RecordProcessor processor, BooleanSupplier closing) {
        lock.lock();
        try {
            if (revoked || rewind >= 0) {
                return; // consumed again from the rewind point (or by the partition's next owner)
            }
            pending.add(record);
            if (draining) {
                return;
            }
            draining = true;
        } finally {
            lock.unlock();
        }
        try {
            executor.execute(() -> drain(processor, closing));
        } catch (RejectedExecutionException stopping) {
            stopDraining();
        }
    }

    private void drain(RecordProcessor processor, BooleanSupplier closing) {
        while (true) {
            ConsumerRecord<byte[], byte[]> next;
            lock.lock();
            try {
                next = revoked || closing.getAsBoolean() ? null : pending.poll();
                if (next == null) {
                    pending.clear(); // a revoked or stopping lane's records are consumed again by whoever owns it next
                    draining = false;
                    idle.signalAll();
                    return;
                }
            } finally {
                lock.unlock();
            }
            if (processor.process(next)) {
                done = next.offset() + 1;
            } else {
                lock.lock();
                try {
                    rewind = next.offset(); // not settled: consumed again, from this record on
                    pending.clear();
                } finally {
                    lock.unlock();
                }
            }
        }
    }

    private void stopDraining() {
        lock.lock();
        try {
            pending.clear();
            draining = false;
            idle.signalAll();
        } finally {
            lock.unlock();
        }
    }

    /**
     * Stops taking records (those not started are dropped: the partition's next owner consumes
     * them from the committed offset) and waits up to {@code timeoutNanos} for the one being
     * handled to settle.
     *
     * @return true when nothing is being handled any more
     */
    boolean revokeAndAwait(long timeoutNanos) throws InterruptedException {
        lock.lock();
        try {
            revoked = true;
            pending.clear();
            long left = timeoutNanos;
            while (draining) {
                if (left <= 0) {
                    return false;
                }
                left = idle.awaitNanos(left);
            }
            return true;
        } finally {
            lock.unlock();
        }
    }
}
