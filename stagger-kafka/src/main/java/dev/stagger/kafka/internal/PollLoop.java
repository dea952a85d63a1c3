package dev.stagger.kafka.internal;

import dev.stagger.Clock;
import dev.stagger.RetryEngine;
import dev.stagger.RetryState;
import dev.stagger.kafka.KafkaHeaders;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.function.BooleanSupplier;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.WakeupException;
import org.jspecify.annotations.Nullable;

/**
 * The consumer's poll thread: the only thread that touches the {@link Consumer}. It hands each
 * partition's records to that partition's {@link Lane}, commits what the lanes have settled, and
 * pauses exactly the partitions that must wait: a delay topic's partition whose head is not due
 * (it seeks back to the head and resumes it when due, so no other partition waits), and a
 * partition with more records waiting for a handler than {@code maxPending}. The set of paused
 * partitions is recomputed from those two reasons before every poll and compared with what the
 * consumer has paused, so no partition stays paused for any other reason, a rebalance included:
 * a revoked partition's lane is settled, committed and dropped, and a newly assigned partition
 * starts unpaused.
 */
public final class PollLoop implements Runnable {
    /** How long a synchronous commit (on a rebalance or a close) may take. */
    static final Duration COMMIT_TIMEOUT = Duration.ofSeconds(5);
    /** The longest poll, so due heads are resumed on time and a close is seen promptly. */
    static final long MAX_POLL_MILLIS = 100;

    private final Consumer<byte[], byte[]> consumer;
    private final TopicSet topics;
    private final RecordProcessor processor;
    private final Executor handlers;
    private final Clock clock;
    private final int maxPending;
    private final long revokeTimeoutNanos;
    private final BooleanSupplier closing;
    private final RetryEngine engine;
    private final @Nullable KeyOrder keyOrder;
    private final @Nullable RetryingKeys retrying;
    private final Map<TopicPartition, Lane> lanes = new ConcurrentHashMap<>();
    private volatile boolean stopping;
    private volatile Set<TopicPartition> pausedNow = Set.of();

    /**
     * @param maxPending records a partition may have waiting for a handler before it is paused
     * @param revokeTimeout how long a revoked partition's record in hand may take to settle
     */
    public PollLoop(Consumer<byte[], byte[]> consumer, TopicSet topics, RecordProcessor processor, Executor handlers,
                    Clock clock, int maxPending, Duration revokeTimeout, BooleanSupplier closing) {
        this(consumer, topics, processor, handlers, clock, maxPending, revokeTimeout, closing, null);
    }

    /**
     * @param keyOrder the key-order mode's bounds, or null when records of a key may overtake its
     *     retry; in that mode a record of a delay topic settled for good releases its key's held
     *     records in the work topic's partition of the same number
     */
    public PollLoop(Consumer<byte[], byte[]> consumer, TopicSet topics, RecordProcessor processor, Executor handlers,
                    Clock clock, int maxPending, Duration revokeTimeout, BooleanSupplier closing,
                    @Nullable KeyOrder keyOrder) {
        this(consumer, topics, processor, handlers, clock, maxPending, revokeTimeout, closing, keyOrder, null);
    }

    /**
     * @param retrying in key-order mode, reads which keys of a work-topic partition given to this
     *     consumer have a record in retry already, so their records are held from the start; null
     *     when order is not rebuilt
     */
    public PollLoop(Consumer<byte[], byte[]> consumer, TopicSet topics, RecordProcessor processor, Executor handlers,
                    Clock clock, int maxPending, Duration revokeTimeout, BooleanSupplier closing,
                    @Nullable KeyOrder keyOrder, @Nullable RetryingKeys retrying) {
        this.keyOrder = keyOrder;
        this.retrying = retrying;
        this.consumer = consumer;
        this.topics = topics;
        this.processor = processor;
        this.handlers = handlers;
        this.clock = clock;
        this.maxPending = maxPending;
        this.revokeTimeoutNanos = revokeTimeout.toNanos();
        this.closing = closing;
        this.engine = RetryEngine.of("poll", RecordProcessor.COPY_POLICY).withClock(clock);
    }

    /** The partitions paused after the latest poll (a snapshot, readable from any thread). */
    public Set<TopicPartition> paused() {
        return pausedNow;
    }

    /** The partitions assigned now; for tests and diagnostics. */
    public Set<TopicPartition> assigned() {
        return Set.copyOf(lanes.keySet());
    }

    /** Ends the loop: the poll in progress returns at once; lanes are settled and committed, the consumer closed. */
    public void stop() {
        stopping = true;
        consumer.wakeup();
    }

    @Override
    public void run() {
        try {
            consumer.subscribe(topics.consumed(), new Rebalance());
            RetryState failures = engine.firstAttempt();
            while (!stopping) {
                long now = clock.currentTimeMillis();
                long wait = MAX_POLL_MILLIS;
                for (Lane lane : lanes.values()) {
                    lane.resumeIfRoom();
                    long rewind = lane.takeRewind();
                    if (rewind >= 0) {
                        consumer.seek(lane.partition, rewind);
                    }
                    if (lane.blockedUntil > 0) {
                        if (lane.blockedUntil <= now) {
                            lane.blockedUntil = 0;
                        } else {
                            wait = Math.min(wait, lane.blockedUntil - now);
                        }
                    }
                }
                applyPauses();
                ConsumerRecords<byte[], byte[]> records;
                try {
                    records = consumer.poll(Duration.ofMillis(Math.max(1, wait)));
                    failures = engine.firstAttempt();
                } catch (WakeupException e) {
                    break;
                } catch (KafkaException e) {
                    failures = waitAfter(failures, e); // the broker or a topic is not right: poll again after a growing wait
                    continue;
                }
                dispatch(records);
                commit(false);
            }
        } catch (WakeupException stopped) {
            // a close during a rebalance or a commit
        } finally {
            closeLanes();
        }
    }

    /** Waits as {@link RecordProcessor#COPY_POLICY} says after the failures so far; returns the next state. */
    private RetryState waitAfter(RetryState failures, KafkaException e) {
        RetryEngine.Verdict verdict = engine.decide(failures, null, e);
        try {
            clock.sleep(verdict.delay().toNanos());
        } catch (InterruptedException interrupted) {
            Thread.currentThread().interrupt();
            stopping = true;
        }
        return verdict.next().orElse(failures);
    }

    private void dispatch(ConsumerRecords<byte[], byte[]> records) {
        long now = clock.currentTimeMillis();
        for (TopicPartition tp : records.partitions()) {
            Lane lane = lanes.get(tp);
            if (lane == null) {
                continue; // revoked in this poll: its next owner consumes it
            }
            List<ConsumerRecord<byte[], byte[]>> polled = records.records(tp);
            if (lane.levelMillis < 0) {
                lane.addAll(polled); // the work topic's records: one hand-off for the poll's records of the partition
                continue;
            }
            int due = 0;
            for (ConsumerRecord<byte[], byte[]> r : polled) {
                // due when its level's time since it was produced is up, or at its due time if sooner;
                // never more than one level from now, whatever its timestamp says
                long resumeAt = Math.min(r.timestamp(), now) + lane.levelMillis;
                long dueAt = RecordHeaderCodec.number(r.headers(), KafkaHeaders.DUE_AT, 0);
                if (dueAt > 0) {
                    resumeAt = Math.min(resumeAt, dueAt);
                }
                if (resumeAt > now) {
                    // the head is not due: this partition waits for it, no other does
                    consumer.seek(tp, r.offset());
                    lane.blockedUntil = resumeAt;
                    break;
                }
                due++;
            }
            lane.addAll(due == polled.size() ? polled : polled.subList(0, due));
        }
    }

    /** Pauses exactly the partitions whose head is not due or whose lane is full; resumes every other. */
    private void applyPauses() {
        Set<TopicPartition> wanted = new HashSet<>();
        for (Lane lane : lanes.values()) {
            if (lane.blockedUntil > 0 || lane.size() >= maxPending) {
                wanted.add(lane.partition);
            }
        }
        Set<TopicPartition> paused = consumer.paused();
        Set<TopicPartition> assigned = consumer.assignment();
        List<TopicPartition> resume = new ArrayList<>();
        for (TopicPartition tp : paused) {
            if (!wanted.contains(tp) && assigned.contains(tp)) {
                resume.add(tp);
            }
        }
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
        if (!wanted.equals(pausedNow)) {
            pausedNow = Set.copyOf(wanted);
        }
    }

    private void commit(boolean sync) {
        commit(lanes.values(), sync);
    }

    private void commit(Collection<Lane> of, boolean sync) {
        Map<TopicPartition, OffsetAndMetadata> offsets = new HashMap<>();
        for (Lane lane : of) {
            long done = lane.done();
            if (done > lane.committed) {
                offsets.put(lane.partition, new OffsetAndMetadata(done));
            }
        }
        if (offsets.isEmpty()) {
            return;
        }
        if (sync) {
            consumer.commitSync(offsets, COMMIT_TIMEOUT); // bounded: a deleted topic's partition must not hold the loop
            offsets.forEach((tp, o) -> markCommitted(tp, o.offset()));
        } else {
            consumer.commitAsync(offsets, (done, e) -> {
                if (e == null) {
                    done.forEach((tp, o) -> markCommitted(tp, o.offset())); // on the poll thread, in a later poll
                }
            });
        }
    }

    private void markCommitted(TopicPartition tp, long offset) {
        Lane lane = lanes.get(tp);
        if (lane != null && offset > lane.committed) {
            lane.committed = offset;
        }
    }

    /** Settles the lanes of {@code partitions} (within the revoke timeout) and commits them when {@code commit}. */
    private void release(Collection<TopicPartition> partitions, boolean commit) {
        List<Lane> released = new ArrayList<>();
        for (TopicPartition tp : partitions) {
            Lane lane = lanes.get(tp);
            if (lane != null) {
                released.add(lane);
            }
        }
        try {
            long deadline = System.nanoTime() + revokeTimeoutNanos;
            for (Lane lane : released) {
                lane.revokeAndAwait(Math.max(0, deadline - System.nanoTime()));
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (commit) {
            try {
                commit(released, true);
            } catch (KafkaException e) {
                // not committed: the partition's next owner consumes the settled records again (at least once)
            }
        }
        for (Lane lane : released) {
            lanes.remove(lane.partition);
        }
    }

    private void closeLanes() {
        release(List.copyOf(lanes.keySet()), true);
    }

    private Lane lane(TopicPartition tp) {
        long level = topics.levelOf(tp.topic()).orElse(-1L);
        return new Lane(tp, level, handlers, processor, closing, keyOrder,
                keyOrder == null || level < 0 ? null : this::releaseKey);
    }

    /** Key order: {@code settled}, a delay topic's record, settled for good: its key's held records go on. */
    private void releaseKey(ConsumerRecord<byte[], byte[]> settled) {
        Lane work = lanes.get(new TopicPartition(topics.topic(), settled.partition()));
        if (work != null && settled.key() != null) {
            work.release(settled.key());
        }
    }

    /** Records held back for their key now, over all partitions (0 when key order is off). */
    public int held() {
        int n = 0;
        for (Lane lane : lanes.values()) {
            n += lane.held();
        }
        return n;
    }

    /**
     * Key order: the keys of {@code lane}'s partition with a record in retry (read from the broker)
     * are held from its first record. When they cannot be read in time, the lane starts without
     * them: a later record may then overtake a retry that was waiting before this consumer got the
     * partition (what the README states).
     */
    private void holdRetryingKeys(Lane lane) {
        try {
            lane.holdKeys(java.util.Objects.requireNonNull(retrying).of(consumer, lane.partition.partition()));
        } catch (WakeupException stopping) {
            throw stopping;
        } catch (KafkaException | IllegalStateException e) {
            // order not rebuilt for this partition: as without the read
        }
    }

    private final class Rebalance implements ConsumerRebalanceListener {
        @Override
        public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
            release(partitions, true);
        }

        @Override
        public void onPartitionsLost(Collection<TopicPartition> partitions) {
            release(partitions, false);
        }

        @Override
        public void onPartitionsAssigned(Collection<TopicPartition> partitions) {
            for (TopicPartition tp : partitions) {
                Lane lane = lanes.computeIfAbsent(tp, PollLoop.this::lane);
                if (retrying != null && tp.topic().equals(topics.topic())) {
                    holdRetryingKeys(lane);
                }
            }
            // a partition this consumer paused before it lost it starts unpaused here
            List<TopicPartition> stale = new ArrayList<>(partitions);
            stale.retainAll(consumer.paused());
            if (!stale.isEmpty()) {
                consumer.resume(stale);
            }
        }
    }
}
