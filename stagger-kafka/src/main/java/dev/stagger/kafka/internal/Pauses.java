package dev.stagger.kafka.internal;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.common.TopicPartition;
import org.jspecify.annotations.Nullable;

/**
 * Which of a poll loop's partitions its consumer pauses: exactly those whose head is not due (a
 * delay topic's) or whose lane is full, recomputed from the lanes before every poll, so no
 * partition stays paused for any other reason.
 *
 * <p>A work lane that has just filled first <em>holds</em> the poll thread, up to a bound, before
 * its partition is paused. A pause is the right answer to a partition whose handler is slow (the
 * others are fetched on), but a costly one for a lane that is full only until its handler takes
 * what waits: while one partition is paused the others are fetched on until they are caught up,
 * a fetch of caught-up partitions is held by the broker for {@code fetch.max.wait.ms} (500 ms by
 * default), and the paused partition, resumed, cannot be fetched meanwhile (a consumer has one
 * fetch in flight per broker). Holding fetches nothing for that moment instead, so the partitions
 * are fetched evenly, as by a consumer that handles its records on its poll thread.
 *
 * <p>The poll thread holds, applies and reads; {@link #roomAgain} and {@link #now} from any thread.
 */
final class Pauses {
    private final Consumer<byte[], byte[]> consumer;
    private final int maxPending;
    private final long holdNanos;
    private volatile Set<TopicPartition> now = Set.of();
    private volatile @Nullable Thread holding;
    /**
     * Poll thread: the consumer had a partition paused that it no longer holds, as a client may
     * keep it when the partition is given back: the paused set is compared before every poll until
     * none is left.
     */
    private boolean strays;

    /**
     * @param maxPending records waiting for a handler at which a lane is full
     * @param holdNanos how long a lane that has just filled may hold the poll thread before its
     *     partition is paused; 0 pauses it at once
     */
    Pauses(Consumer<byte[], byte[]> consumer, int maxPending, long holdNanos) {
        this.consumer = consumer;
        this.maxPending = maxPending;
        this.holdNanos = holdNanos;
    }

    /** The partitions paused by the latest {@link #apply} (a snapshot). */
    Set<TopicPartition> now() {
        return now;
    }

    /**
     * Poll thread, before it applies the pauses: while a lane is full whose partition is not paused
     * yet, waits for a lane to take its records, for at most the bound or until {@code stopping}.
     * Returns at once when no lane has newly filled.
     */
    void hold(Collection<Lane> lanes, BooleanSupplier stopping) {
        if (holdNanos == 0) {
            return;
        }
        long deadline = 0;
        holding = Thread.currentThread(); // before the check: a lane that takes its records after it wakes this thread
        try {
            while (!stopping.getAsBoolean() && newlyFull(lanes)) {
                long t = System.nanoTime();
                if (deadline == 0) {
                    deadline = t + holdNanos;
                }
                if (t - deadline >= 0) {
                    return; // still full: its partition is paused, the others are polled on
                }
                LockSupport.parkNanos(this, deadline - t);
            }
        } finally {
            holding = null;
        }
    }

    private boolean newlyFull(Collection<Lane> lanes) {
        for (Lane lane : lanes) {
            if (lane.size() >= maxPending && !now.contains(lane.partition)) {
                return true;
            }
        }
        return false;
    }

    /** A full lane has taken its records (or the loop stops): a held poll thread looks again. Any thread. */
    void roomAgain() {
        Thread t = holding;
        if (t != null) {
            LockSupport.unpark(t);
        }
    }

    /**
     * Poll thread: pauses exactly the partitions of {@code lanes} whose head is not due or whose lane
     * is full; resumes every other. When none is to be paused and none is, it asks the consumer
     * nothing (the common case, before every poll): only this class pauses the consumer's
     * partitions, and while the consumer still has one paused that it no longer holds, the paused
     * set is compared every time, so such a partition given back is resumed.
     */
    void apply(Collection<Lane> lanes) {
        Set<TopicPartition> wanted = new HashSet<>();
        for (Lane lane : lanes) {
            if (lane.blockedUntil > 0 || lane.size() >= maxPending) {
                wanted.add(lane.partition);
            }
        }
        if (wanted.isEmpty() && now.isEmpty() && !strays) {
            return; // nothing to pause, and nothing paused: only this class pauses the consumer's partitions
        }
        Set<TopicPartition> paused = consumer.paused();
        Set<TopicPartition> assigned = consumer.assignment();
        List<TopicPartition> resume = new ArrayList<>();
        boolean stray = false;
        for (TopicPartition tp : paused) {
            if (!wanted.contains(tp)) {
                if (assigned.contains(tp)) {
                    resume.add(tp);
                } else {
                    stray = true; // not resumable now; resumed if it is assigned again while still paused
                }
            }
        }
        strays = stray;
        List<TopicPartition> pause = new ArrayList<>();
        for (TopicPartition tp : wanted) {
            if (!paused.contains(tp)) {
                pause.add(tp);
            }
        }
        if (!resume.isEmpty()) {
            consumer.resume(resume);
        }
        if (!pause.isEmpty()) {
            consumer.pause(pause);
        }
        if (!wanted.equals(now)) {
            now = Set.copyOf(wanted);
        }
    }
}
