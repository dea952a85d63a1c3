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
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.WakeupException;
import org.jspecify.annotations.Nullable;

/**
 * One consumer's poll thread: the only thread that touches its {@link Consumer}. A retry consumer
 * runs two: the <em>work</em> loop, a member of the group subscribed to the work topic, and the
 * <em>delay</em> loop, whose consumer is assigned by hand the delay topics' partitions that go with
 * the work partitions the work loop owns ({@link Delays}). They are two consumers because a fetch
 * request asks one broker for all of a consumer's partitions at once and the broker holds it (up to
 * {@code fetch.max.wait.ms}) while every partition in it is empty: with the delay topics' empty
 * partitions in the same consumer, the work topic's records already fetched would be handled and
 * then wait, each time, for that held fetch to return.
 *
 * <p>Each loop hands each partition's records to that partition's {@link Lane}, commits what the
 * lanes have settled, and pauses exactly the partitions that must wait: a delay topic's partition
 * whose head is not due (it seeks back to the head and resumes it when due, so no other partition
 * waits), and a partition with more records waiting for a handler than {@code maxPending} (in the
 * work loop after a short hold of the poll thread, {@link Pauses}). The set
 * of paused partitions is recomputed from those two reasons before every poll and, whenever a
 * partition is paused or is to be, compared with what the consumer has paused (only this loop
 * pauses its consumer's partitions), so no partition stays paused for any other reason, a rebalance
 * included: a revoked partition's lane is settled, committed and dropped (the delay partitions
 * that go with it too, before the revocation returns, so no two consumers hold them at once), and
 * a newly assigned partition starts unpaused.
 */
public final class PollLoop implements Runnable {
    /** How long a synchronous commit (on a rebalance or a close) may take. */
    static final Duration COMMIT_TIMEOUT = Duration.ofSeconds(5);
    /**
     * How long a work lane that has just filled holds the poll thread before its partition is
     * paused: long enough for a handler to take what waits (milliseconds), short against the
     * broker's hold of a caught-up fetch a pause can cost (500 ms by default).
     */
    public static final Duration FULL_HOLD = Duration.ofMillis(50);
    /** The longest poll, so due heads are resumed on time and a close is seen promptly. */
    static final long MAX_POLL_MILLIS = 100;
    /** How long the delay loop waits for a topic's partition count. */
    static final Duration PARTITIONS_TIMEOUT = Duration.ofSeconds(5);
    /**
     * How often the delay loop counts the topics' partitions again: a delay topic grown to follow
     * a work topic that gained partitions is consumed within this.
     */
    static final long RECOUNT_MILLIS = 5_000;

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
    /** The work loop's delay loop; null in the delay loop. */
    private final @Nullable PollLoop delays;
    /** The delay loop's work loop (where a settled delay record releases its key); null in the work loop. */
    private volatile @Nullable PollLoop work;
    private final Map<TopicPartition, Lane> lanes = new ConcurrentHashMap<>();
    private volatile boolean stopping;
    /** Whether the poll thread is in {@link Consumer#poll} now: a lane with room again wakes it there. */
    private volatile boolean polling;
    /** When the poll in progress times out: a retry kept in memory due sooner wakes it. */
    private volatile long pollEnds;
    private final @Nullable MemoryRetries memory;
    private final Pauses pauses;

    /** Delay loop: the work partitions whose delay partitions it is told to consume, and how far it has followed. */
    private final ReentrantLock following = new ReentrantLock();
    private final Condition followed = following.newCondition();
    private Set<Integer> owned = Set.of();
    private boolean commitDropped = true;
    private long told;
    private long applied;
    /** Delay loop's thread only: when to count the topics' partitions again. */
    private long recountAt;
    /** Delay loop: topics created again; their partitions are read from their start before the next poll. */
    private final Set<String> createdAgain = ConcurrentHashMap.newKeySet();

    /** What both loops of a consumer share. */
    public record Settings(TopicSet topics, RecordProcessor processor, Executor handlers, Clock clock, int maxPending,
                           Duration revokeTimeout, BooleanSupplier closing, @Nullable KeyOrder keyOrder, Duration fullHold,
                           @Nullable MemoryRetries memory) {
        /**
         * @param maxPending records a partition may have waiting for a handler before it is paused
         * @param revokeTimeout how long a revoked partition's record in hand may take to settle
         * @param keyOrder the key-order mode's bounds, or null when records of a key may overtake its
         *     retry; in that mode a record of a delay topic settled for good releases its key's held
         *     records in the work topic's partition of the same number
         * @param fullHold how long a work lane that has just filled may hold the poll thread before
         *     its partition is paused ({@link Pauses})
         * @param memory which retries wait in memory instead of a delay topic (not in key order), or
         *     null for none
         */
        public Settings {
            if (fullHold.isNegative()) {
                throw new IllegalArgumentException("fullHold must not be negative, got " + fullHold);
            }
        }

        /** With the default {@link #FULL_HOLD}. */
        public Settings(TopicSet topics, RecordProcessor processor, Executor handlers, Clock clock, int maxPending,
                        Duration revokeTimeout, BooleanSupplier closing, @Nullable KeyOrder keyOrder) {
            this(topics, processor, handlers, clock, maxPending, revokeTimeout, closing, keyOrder, FULL_HOLD, null);
        }
    }

    private PollLoop(Consumer<byte[], byte[]> consumer, Settings s, @Nullable RetryingKeys retrying,
                     @Nullable PollLoop delays) {
        this.consumer = consumer;
        this.topics = s.topics();
        this.processor = s.processor();
        this.handlers = s.handlers();
        this.clock = s.clock();
        this.maxPending = s.maxPending();
        this.pauses = new Pauses(consumer, s.maxPending(), delays == null ? 0 : s.fullHold().toNanos());
        this.revokeTimeoutNanos = s.revokeTimeout().toNanos();
        this.closing = s.closing();
        this.keyOrder = s.keyOrder();
        this.memory = s.memory();
        this.retrying = retrying;
        this.delays = delays;
        this.engine = RetryEngine.of("poll", RecordProcessor.COPY_POLICY).withClock(s.clock());
    }

    /**
     * The delay loop: {@code consumer} (of the consumer's delay group, never subscribed) is assigned
     * the delay topics' partitions that go with the work partitions its work loop owns.
     */
    public static PollLoop delays(Consumer<byte[], byte[]> consumer, Settings settings) {
        return new PollLoop(consumer, settings, null, null);
    }

    /**
     * The work loop: {@code consumer}, a member of the consumer's group, subscribes to the work
     * topic; {@code delays} follows the partitions it is given and loses.
     *
     * @param retrying in key-order mode, reads which keys of a work-topic partition given to this
     *     consumer have a record in retry already, so their records are held from the start; null
     *     when order is not rebuilt
     */
    public static PollLoop work(Consumer<byte[], byte[]> consumer, Settings settings, @Nullable RetryingKeys retrying,
                                PollLoop delays) {
        PollLoop loop = new PollLoop(consumer, settings, retrying, delays);
        delays.work = loop;
        return loop;
    }

    /** The partitions paused after the latest poll (a snapshot, readable from any thread). */
    public Set<TopicPartition> paused() {
        return pauses.now();
    }

    /** The partitions assigned now; for tests and diagnostics. */
    public Set<TopicPartition> assigned() {
        return Set.copyOf(lanes.keySet());
    }

    /**
     * Ends the loop: the poll in progress returns at once; lanes are settled and committed, the
     * consumer closed. Stop the work loop first, then its delay loop: the work loop hands its
     * partitions' delay partitions back as it ends.
     */
    public void stop() {
        stopping = true;
        consumer.wakeup();
        pauses.roomAgain();
        following.lock();
        try {
            followed.signalAll();
        } finally {
            following.unlock();
        }
    }

    @Override
    public void run() {
        try {
            if (delays != null) {
                consumer.subscribe(List.of(topics.topic()), new Rebalance());
            }
            RetryState failures = engine.firstAttempt();
            while (!stopping) {
                if (delays == null && !follow()) {
                    continue; // owns no delay partition now: waited for the work loop to give it some
                }
                long now = clock.currentTimeMillis();
                long wait = MAX_POLL_MILLIS;
                for (Lane lane : lanes.values()) {
                    lane.resumeIfRoom();
                    long rewind = lane.takeRewind();
                    if (rewind >= 0) {
                        consumer.seek(lane.partition, rewind);
                    }
                    long kept = lane.takeDue(now);
                    if (kept != Long.MAX_VALUE) {
                        wait = Math.min(wait, kept - now);
                    }
                    if (lane.blockedUntil > 0) {
                        if (lane.blockedUntil <= now) {
                            lane.blockedUntil = 0;
                        } else {
                            wait = Math.min(wait, lane.blockedUntil - now);
                        }
                    }
                }
                pauses.hold(lanes.values(), () -> stopping);
                pauses.apply(lanes.values());
                ConsumerRecords<byte[], byte[]> records;
                pollEnds = clock.currentTimeMillis() + Math.max(1, wait);
                polling = true;
                try {
                    records = consumer.poll(Duration.ofMillis(Math.max(1, wait)));
                    failures = engine.firstAttempt();
                } catch (WakeupException e) {
                    if (stopping) {
                        break;
                    }
                    continue; // a full lane has room again: its partition is resumed before the next poll
                } catch (KafkaException e) {
                    failures = waitAfter(failures, e); // the broker or a topic is not right: poll again after a growing wait
                    continue;
                } finally {
                    polling = false;
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

    /**
     * Work loop to delay loop: consume the delay partitions of work partitions {@code numbers} (and
     * only those); the delay partitions dropped are committed when {@code commitDropped}.
     *
     * @return the request's number, for {@link #awaitFollowed}
     */
    private long tell(Set<Integer> numbers, boolean commitDropped) {
        following.lock();
        try {
            owned = Set.copyOf(numbers);
            this.commitDropped = commitDropped;
            followed.signalAll();
            return ++told;
        } finally {
            following.unlock();
        }
    }

    /** Waits up to {@code timeoutNanos} until request {@code n} has been followed (or the loop stopped). */
    private void awaitFollowed(long n, long timeoutNanos) throws InterruptedException {
        following.lock();
        try {
            long left = timeoutNanos;
            while (applied < n && !stopping && left > 0) {
                left = followed.awaitNanos(left);
            }
        } finally {
            following.unlock();
        }
    }

    /**
     * Delay loop, before each poll: follows what the work loop told it last (releases, and commits
     * when told, the delay partitions it no longer owns; is assigned the ones it does).
     *
     * @return whether it owns partitions to poll; when it owns none it has waited (at most
     *     {@link #MAX_POLL_MILLIS}) for the work loop to tell it more
     */
    private boolean follow() {
        Set<Integer> numbers;
        boolean commit;
        long n;
        boolean afresh = !createdAgain.isEmpty();
        following.lock();
        try {
            boolean toldMore = applied != told;
            if (!toldMore && !afresh && (owned.isEmpty() || clock.currentTimeMillis() < recountAt)) {
                if (lanes.isEmpty()) {
                    awaitQuietly(); // nothing to poll (a consumer with no partition may not poll): wait to be told
                    return false;
                }
                return true;
            }
            numbers = owned;
            commit = !toldMore || commitDropped;
            n = told;
        } finally {
            following.unlock();
        }
        Set<String> again = afresh ? startAfresh() : Set.of();
        // told something new, or time to count the partitions again (a topic that gained partitions)
        recountAt = clock.currentTimeMillis() + RECOUNT_MILLIS;
        Set<TopicPartition> wanted = delayPartitions(numbers);
        if (!wanted.equals(lanes.keySet())) {
            List<TopicPartition> dropped = new ArrayList<>(lanes.keySet());
            dropped.removeAll(wanted);
            if (!dropped.isEmpty()) {
                release(dropped, commit, commit);
            }
            consumer.assign(wanted);
            for (TopicPartition tp : wanted) {
                lanes.computeIfAbsent(tp, this::lane);
            }
            pauses.apply(lanes.values()); // what the dropped partitions waited for is no longer paused, polled or not
        }
        if (!again.isEmpty()) {
            List<TopicPartition> fromStart = wanted.stream().filter(tp -> again.contains(tp.topic())).toList();
            if (!fromStart.isEmpty()) { // none would mean every partition assigned
                consumer.seekToBeginning(fromStart);
            }
        }
        following.lock();
        try {
            applied = Math.max(applied, n);
            followed.signalAll();
        } finally {
            following.unlock();
        }
        return !wanted.isEmpty();
    }

    /**
     * Delay loop: delay topics were deleted and created again. A partition assigned by hand keeps
     * its position, and the new topic starts again at offset 0; nor is the group's committed offset
     * to be trusted (a commit that failed while the topic was gone is made again, and lands on the
     * new topic). So those topics' lanes are dropped (settled, nothing committed) and their
     * partitions read from the new topic's start (at least once).
     *
     * @return the topics whose partitions are to be read from their start once assigned again
     */
    private Set<String> startAfresh() {
        Set<String> again = new HashSet<>();
        for (Iterator<String> i = createdAgain.iterator(); i.hasNext(); ) {
            again.add(i.next());
            i.remove();
        }
        // the old topic's records are gone: retries kept in memory of them go to the new topic, not dropped
        release(lanes.keySet().stream().filter(tp -> again.contains(tp.topic())).toList(), false, true);
        return again;
    }

    /**
     * Delay topics {@code topics} were deleted and created again (a copy found one missing); called
     * from any thread. The delay loop reads their partitions from the start of the new topics
     * before its next poll ({@link #startAfresh}).
     */
    public void topicsCreatedAgain(Set<String> topics) {
        if (topics.isEmpty()) {
            return;
        }
        createdAgain.addAll(topics);
        following.lock();
        try {
            followed.signalAll();
        } finally {
            following.unlock();
        }
        roomAgain(); // a poll in progress returns now
    }

    /** Under {@link #following}: waits to be told something, or stopped, for at most {@link #MAX_POLL_MILLIS}. */
    private void awaitQuietly() {
        long left = TimeUnit.MILLISECONDS.toNanos(MAX_POLL_MILLIS);
        try {
            while (!stopping && applied == told && createdAgain.isEmpty() && left > 0) {
                left = followed.awaitNanos(left);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            stopping = true;
        }
    }

    /**
     * The delay topics' partitions that go with work partitions {@code numbers}: partition {@code d}
     * of a delay topic goes with work partition {@code d mod w} ({@code w} work partitions), so every
     * delay partition has exactly one owner in the group even where a delay topic has more
     * partitions than the work topic; partition {@code n} goes with work partition {@code n}, where
     * key order pins a record's copies. Where a count is not known (the broker does not answer in
     * time, a topic deleted meanwhile), partition {@code n} for work partition {@code n}.
     */
    private Set<TopicPartition> delayPartitions(Set<Integer> numbers) {
        Set<TopicPartition> out = new HashSet<>();
        if (numbers.isEmpty()) {
            return out;
        }
        int w = partitionCount(topics.topic());
        for (String t : topics.retryTopics()) {
            int d = partitionCount(t);
            if (w > 0 && d > 0) {
                for (int i = 0; i < d; i++) {
                    if (numbers.contains(i % w)) {
                        out.add(new TopicPartition(t, i));
                    }
                }
            } else {
                numbers.forEach(i -> out.add(new TopicPartition(t, i)));
            }
        }
        return out;
    }

    /** The partitions of {@code topic} the consumer's metadata knows, or -1 when it does not know them in time. */
    private int partitionCount(String topic) {
        try {
            List<PartitionInfo> infos = pastStrayWakeup(() -> consumer.partitionsFor(topic, PARTITIONS_TIMEOUT));
            return infos == null || infos.isEmpty() ? -1 : infos.size();
        } catch (WakeupException e) {
            throw e;
        } catch (KafkaException e) {
            return -1;
        }
    }

    /**
     * Runs a blocking call of the consumer's; if it is cut short by a wake-up that a lane sent for a
     * poll that had already returned ({@link #roomAgain}), not by a stop, runs it once more. A
     * wake-up is this consumer's own signal, not a failure: the second call is not a retry of
     * anything that failed, and a second stray wake-up cannot follow (a lane wakes only a poll).
     */
    private <T> T pastStrayWakeup(Supplier<T> call) {
        try {
            return call.get();
        } catch (WakeupException e) {
            if (stopping) {
                throw e;
            }
            return call.get();
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
            pastStrayWakeup(() -> {
                consumer.commitSync(offsets, COMMIT_TIMEOUT); // bounded: a deleted topic's partition must not hold the loop
                return null;
            });
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

    /**
     * Settles the lanes of {@code partitions} (within the revoke timeout) and commits them when
     * {@code commit}; their retries kept in memory go to their delay topics when {@code parkKept},
     * else are dropped (consumed again from the committed offset, which never passed them).
     */
    private void release(Collection<TopicPartition> partitions, boolean commit, boolean parkKept) {
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
                lane.revokeAndAwait(Math.max(0, deadline - System.nanoTime()), parkKept);
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
        handOver(List.copyOf(lanes.keySet()), true);
    }

    /**
     * Releases {@code partitions} (committed when {@code commit}); in the work loop, the delay loop
     * releases their delay partitions at the same time, and this returns once it has (or after the
     * revoke timeout and a commit's more), so the next owner of a work partition never shares its
     * delay partitions with this consumer.
     */
    private void handOver(Collection<TopicPartition> partitions, boolean commit) {
        PollLoop d = delays;
        if (d == null) {
            release(partitions, commit, commit);
            return;
        }
        Set<Integer> kept = new HashSet<>();
        for (TopicPartition tp : lanes.keySet()) {
            if (!partitions.contains(tp)) {
                kept.add(tp.partition());
            }
        }
        long request = d.tell(kept, commit);
        release(partitions, commit, commit);
        try {
            d.awaitFollowed(request, revokeTimeoutNanos + COMMIT_TIMEOUT.toNanos() + 2 * PARTITIONS_TIMEOUT.toNanos());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Work loop: tells the delay loop the work partitions owned now. */
    private void tellDelays() {
        PollLoop d = delays;
        if (d != null) {
            Set<Integer> numbers = new HashSet<>();
            lanes.keySet().forEach(tp -> numbers.add(tp.partition()));
            d.tell(numbers, true);
        }
    }

    private Lane lane(TopicPartition tp) {
        long level = topics.levelOf(tp.topic()).orElse(-1L);
        return new Lane(tp, level, handlers, processor, closing, keyOrder,
                keyOrder == null || level < 0 ? null : this::releaseKey, maxPending, this::roomAgain, memory, this::keptUntil);
    }

    /** Key order: {@code settled}, a delay topic's record, settled for good: its key's held records go on. */
    private void releaseKey(ConsumerRecord<byte[], byte[]> settled) {
        PollLoop w = work;
        Lane lane = w == null ? null : w.lanes.get(new TopicPartition(topics.topic(), settled.partition()));
        if (lane != null && settled.key() != null) {
            lane.release(settled.key());
        }
    }

    /**
     * A lane that was full has taken its records: ends a hold of the poll thread, or wakes the poll in
     * progress, so the partition is resumed now, not when the poll times out (a poll with every
     * partition paused or fetched would otherwise wait it out while the handlers have nothing to do).
     * Any thread.
     */
    private void roomAgain() {
        pauses.roomAgain();
        if (polling) {
            consumer.wakeup(); // a wakeup that comes as the poll returns is taken by the next poll (or a commit, retried)
        }
    }

    /**
     * A retry kept in memory is due at {@code dueAt}: when that is before the poll in progress
     * times out, the poll returns now, so the retry is handed out on time. Any thread.
     */
    private void keptUntil(long dueAt) {
        if (polling && dueAt < pollEnds) {
            consumer.wakeup(); // as roomAgain's: a wakeup that comes as the poll returns is taken by the next poll
        }
    }

    /** Records waiting for a handler now, over all partitions. */
    public int pending() {
        int n = 0;
        for (Lane lane : lanes.values()) {
            n += lane.size();
        }
        return n;
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
            lane.holdKeys(java.util.Objects.requireNonNull(retrying).of(lane.partition.partition()));
        } catch (WakeupException stopping) {
            throw stopping;
        } catch (KafkaException | IllegalStateException e) {
            // order not rebuilt for this partition: as without the read
        }
    }

    private final class Rebalance implements ConsumerRebalanceListener {
        @Override
        public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
            handOver(partitions, true);
        }

        @Override
        public void onPartitionsLost(Collection<TopicPartition> partitions) {
            handOver(partitions, false);
        }

        @Override
        public void onPartitionsAssigned(Collection<TopicPartition> partitions) {
            for (TopicPartition tp : partitions) {
                Lane lane = lanes.computeIfAbsent(tp, PollLoop.this::lane);
                if (retrying != null) {
                    holdRetryingKeys(lane);
                }
            }
            tellDelays(); // after the keys in retry are held: a delay record settled from now on releases its key
            // a partition this consumer paused before it lost it starts unpaused here
            List<TopicPartition> stale = new ArrayList<>(partitions);
            stale.retainAll(consumer.paused());
            if (!stale.isEmpty()) {
                consumer.resume(stale);
            }
        }
    }
}
