package dev.stagger.kafka.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.stagger.Backoff;
import dev.stagger.Clock;
import dev.stagger.Nesting;
import dev.stagger.RandomSource;
import dev.stagger.RetryPolicy;
import dev.stagger.internal.RetryStep;
import dev.stagger.kafka.KafkaHeaders;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.function.BooleanSupplier;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.MockConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.MockProducer;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Which partitions the poll loops pause, and how the delay loop follows the work loop's partitions,
 * on kafka-clients' MockConsumer (real time, short waits, bounded by deadlines): one MockConsumer
 * for the work topic (a group member) and one for the delay topics (assigned by hand).
 */
class PollLoopTest {
    private final TopicSet topics = new TopicSet("orders", new long[] {200, 60_000});
    private final TopicPartition work = new TopicPartition("orders", 0);
    private final TopicPartition shortLevel = new TopicPartition("orders.stagger.retry-200", 0);
    private final TopicPartition longLevel = new TopicPartition("orders.stagger.retry-60000", 0);
    /** Every partition the work loop ever paused. */
    private final Set<TopicPartition> everPaused = ConcurrentHashMap.newKeySet();
    private final MockConsumer<byte[], byte[]> consumer = new MockConsumer<>("earliest") {
        @Override
        public synchronized void pause(java.util.Collection<TopicPartition> partitions) {
            everPaused.addAll(partitions);
            super.pause(partitions);
        }
    };
    /** The handler waits here at a record whose value is "gate" (open unless a test closes it). */
    private volatile java.util.concurrent.CountDownLatch gate = new java.util.concurrent.CountDownLatch(0);
    private final java.util.concurrent.CountDownLatch atGate = new java.util.concurrent.CountDownLatch(1);
    private final MockConsumer<byte[], byte[]> delayConsumer = new MockConsumer<>("earliest");
    private final Set<String> handled = ConcurrentHashMap.newKeySet();
    private final ExecutorService handlers = Executors.newFixedThreadPool(2);
    private final MockProducer<byte[], byte[]> producer = new MockProducer<>(true, null, new ByteArraySerializer(),
            new ByteArraySerializer());
    private PollLoop loop;
    private PollLoop delays;
    private Thread poller;
    private Thread delayPoller;

    @AfterEach
    void stop() throws InterruptedException {
        if (loop != null) {
            loop.stop();
            poller.join(5_000);
            delays.stop();
            delayPoller.join(5_000);
        }
        handlers.shutdownNow();
    }

    private void start() {
        start(PollLoop.FULL_HOLD);
    }

    private void start(Duration fullHold) {
        start(fullHold, null);
    }

    /** With {@code memory}, retries are kept in memory; a record whose value starts with "fail-once" fails its first attempt. */
    private void start(Duration fullHold, MemoryRetries memory) {
        BooleanSupplier no = () -> false;
        RecordProcessor processor = new RecordProcessor(topics, producer, new RetryStep("orders",
                RetryPolicy.builder().maxAttempts(3).backoff(Backoff.fixed(Duration.ofSeconds(30))).build(), Clock.system(),
                RandomSource.seeded(1), Nesting.DEFER), m -> {
                    String v = new String(m.value(), StandardCharsets.UTF_8);
                    if (v.equals("gate")) {
                        atGate.countDown();
                        gate.await();
                    }
                    handled.add(v);
                    if (v.startsWith("fail-once") && m.attempt() == 1) {
                        throw new IllegalStateException("the first attempt fails");
                    }
                },
                Clock.system(), RandomSource.seeded(1), 1_000, 86_400_000, () -> { }, no, no,
                (r, o, a, f, n, d, reason, failure) -> { });
        PollLoop.Settings settings = new PollLoop.Settings(topics, processor, handlers, Clock.system(), 100,
                Duration.ofSeconds(1), no, null, fullHold, memory);
        delays = PollLoop.delays(delayConsumer, settings);
        loop = PollLoop.work(consumer, settings, null, delays);
        Map<TopicPartition, Long> zero = new java.util.HashMap<>();
        for (String t : topics.retryTopics()) {
            for (int p = 0; p < 3; p++) {
                zero.put(new TopicPartition(t, p), 0L);
            }
        }
        delayConsumer.updateBeginningOffsets(zero);
        consumer.schedulePollTask(() -> assign(List.of(work)));
        delayPoller = new Thread(delays, "test-delays");
        delayPoller.start();
        poller = new Thread(loop, "test-poll");
        poller.start();
    }

    private void assign(List<TopicPartition> partitions) {
        consumer.rebalance(partitions);
        Map<TopicPartition, Long> zero = new java.util.HashMap<>();
        partitions.forEach(p -> zero.put(p, 0L));
        consumer.updateBeginningOffsets(zero);
    }

    /** What the delay consumer has paused among its partitions (MockConsumer keeps a dropped partition's pause). */
    private Set<TopicPartition> pausedAndAssigned() {
        Set<TopicPartition> paused = new java.util.HashSet<>(delayConsumer.paused());
        paused.retainAll(delayConsumer.assignment());
        return paused;
    }

    private static List<PartitionInfo> partitions(String topic, int n) {
        List<PartitionInfo> infos = new java.util.ArrayList<>();
        for (int p = 0; p < n; p++) {
            infos.add(new PartitionInfo(topic, p, null, new Node[0], new Node[0]));
        }
        return infos;
    }

    private static ConsumerRecord<byte[], byte[]> record(TopicPartition tp, long offset, String value, long dueAt) {
        RecordHeaders headers = new RecordHeaders();
        if (dueAt > 0) {
            headers.add(KafkaHeaders.DUE_AT, Long.toString(dueAt).getBytes(StandardCharsets.UTF_8));
        }
        return new ConsumerRecord<>(tp.topic(), tp.partition(), offset, System.currentTimeMillis(), TimestampType.CREATE_TIME,
                1, value.length(), "k".getBytes(StandardCharsets.UTF_8), value.getBytes(StandardCharsets.UTF_8), headers,
                Optional.empty());
    }

    private static boolean await(Duration within, BooleanSupplier condition) throws InterruptedException {
        long end = System.nanoTime() + within.toNanos();
        while (System.nanoTime() < end) {
            if (condition.getAsBoolean()) {
                return true;
            }
            Thread.sleep(5);
        }
        return condition.getAsBoolean();
    }

    /**
     * Starts the loops with {@code fullHold} and fills the work lane (100 records waiting, the
     * settings' maxPending) behind a record its handler holds; returns once the loop has them.
     */
    private void startWithTheWorkLaneFullBehindAHeldRecord(Duration fullHold) throws InterruptedException {
        start(fullHold);
        assertThat(await(Duration.ofSeconds(5), () -> loop.assigned().contains(work))).isTrue();
        gate = new java.util.concurrent.CountDownLatch(1);
        consumer.addRecord(record(work, 0, "gate", 0));
        assertThat(atGate.await(5, java.util.concurrent.TimeUnit.SECONDS)).as("the handler has the first record").isTrue();
        for (int i = 1; i <= 100; i++) {
            consumer.addRecord(record(work, i, "r" + i, 0));
        }
        assertThat(await(Duration.ofSeconds(5), () -> loop.pending() == 100)).as("100 records waiting").isTrue();
    }

    @Test
    void aWorkLaneFullOnlyUntilItsHandlerTakesItsRecordsHoldsThePollThreadInsteadOfPausingItsPartition() throws Exception {
        // a pause here would let the other partitions be fetched until caught up, and that fetch held by the broker
        startWithTheWorkLaneFullBehindAHeldRecord(Duration.ofSeconds(30));
        gate.countDown();
        assertThat(await(Duration.ofSeconds(5), () -> handled.size() == 101)).as("all handled").isTrue();
        assertThat(everPaused).as("never paused").isEmpty();
        assertThat(loop.pending()).isZero();
    }

    @Test
    void aWorkLaneStillFullAfterTheHoldIsPausedAndResumedOnceItsHandlerTakesItsRecords() throws Exception {
        startWithTheWorkLaneFullBehindAHeldRecord(Duration.ofMillis(20));
        assertThat(await(Duration.ofSeconds(5), () -> loop.paused().contains(work))).as("paused after the hold").isTrue();
        assertThat(consumer.paused()).containsExactly(work);
        gate.countDown();
        assertThat(await(Duration.ofSeconds(5), () -> handled.size() == 101 && consumer.paused().isEmpty()))
                .as("all handled, the partition resumed").isTrue();
        assertThat(loop.paused()).isEmpty();
    }

    @Test
    void aStopEndsAHoldAtOnce() throws Exception {
        startWithTheWorkLaneFullBehindAHeldRecord(Duration.ofMinutes(10));
        loop.stop(); // the record in hand is given the revoke timeout (1 s) to settle, the hold nothing
        poller.join(5_000);
        boolean ended = !poller.isAlive();
        gate.countDown();
        assertThat(ended).as("the poll thread ended within 5 s").isTrue();
    }

    @Test
    void onlyTheDelayPartitionWhoseHeadIsNotDueIsPaused() throws Exception {
        start();
        assertThat(await(Duration.ofSeconds(5), () -> delays.assigned().size() == 2)).isTrue();
        assertThat(loop.assigned()).containsExactly(work);
        assertThat(delays.assigned()).containsExactlyInAnyOrder(shortLevel, longLevel);
        long now = System.currentTimeMillis();
        delayConsumer.addRecord(record(longLevel, 0, "long", now + 60_000));
        delayConsumer.addRecord(record(shortLevel, 0, "short", now - 1));
        consumer.addRecord(record(work, 0, "work", 0));

        assertThat(await(Duration.ofSeconds(5), () -> handled.containsAll(List.of("work", "short")))).isTrue();
        assertThat(await(Duration.ofSeconds(5), () -> delayConsumer.paused().contains(longLevel))).isTrue();
        assertThat(delayConsumer.paused()).containsExactly(longLevel);
        assertThat(consumer.paused()).isEmpty();
        assertThat(delays.paused()).containsExactly(longLevel);
        assertThat(loop.paused()).isEmpty();
        assertThat(handled).doesNotContain("long");
    }

    @Test
    void theWorkConsumerReadsOnlyTheWorkTopicAndTheDelayConsumerOnlyTheDelayPartitionsThatGoWithIt() throws Exception {
        start();
        assertThat(await(Duration.ofSeconds(5), () -> delays.assigned().size() == 2)).isTrue();
        assertThat(consumer.subscription()).as("a fetch of the work topic never waits on the delay topics' empty partitions")
                .containsExactly("orders");
        assertThat(consumer.assignment()).containsExactly(work);
        assertThat(delayConsumer.subscription()).as("the delay consumer is never a group member").isEmpty();
        assertThat(delayConsumer.assignment()).containsExactlyInAnyOrder(shortLevel, longLevel);
    }

    @Test
    void aDelayPartitionGoesWithTheWorkPartitionOfItsNumberModuloTheWorkTopicsPartitionCount() throws Exception {
        delayConsumer.updatePartitions("orders", partitions("orders", 2));
        for (String t : topics.retryTopics()) {
            delayConsumer.updatePartitions(t, partitions(t, 3)); // more partitions than the work topic: none left unowned
        }
        start();
        assertThat(await(Duration.ofSeconds(5), () -> delays.assigned().size() == 4)).isTrue();
        assertThat(delays.assigned()).containsExactlyInAnyOrder(shortLevel, longLevel,
                new TopicPartition(shortLevel.topic(), 2), new TopicPartition(longLevel.topic(), 2));
    }

    @Test
    void aRevokedWorkPartitionsDelayPartitionsAreReleasedBeforeTheRevocationReturns() throws Exception {
        start();
        assertThat(await(Duration.ofSeconds(5), () -> delays.assigned().size() == 2)).isTrue();
        java.util.concurrent.atomic.AtomicReference<Set<TopicPartition>> atReturn = new java.util.concurrent.atomic.AtomicReference<>();
        consumer.schedulePollTask(() -> {
            assign(List.of());
            atReturn.set(Set.copyOf(delayConsumer.assignment())); // the work loop's revocation has returned here
        });
        assertThat(await(Duration.ofSeconds(5), () -> atReturn.get() != null)).isTrue();
        assertThat(atReturn.get()).as("no delay partition kept past its work partition's revocation").isEmpty();
        assertThat(delays.assigned()).isEmpty();
    }

    @Test
    void aDelayRecordStampedFarAheadWaitsNoLongerThanItsLevel() throws Exception {
        start();
        assertThat(await(Duration.ofSeconds(5), () -> delays.assigned().size() == 2)).isTrue();
        ConsumerRecord<byte[], byte[]> r = record(shortLevel, 0, "stamped", 0);
        delayConsumer.addRecord(new ConsumerRecord<>(r.topic(), r.partition(), r.offset(),
                System.currentTimeMillis() + Duration.ofDays(365).toMillis(), TimestampType.CREATE_TIME, 1, 7, r.key(),
                r.value(), r.headers(), Optional.empty()));
        assertThat(await(Duration.ofSeconds(5), () -> delays.paused().contains(shortLevel))).isTrue();
        assertThat(await(Duration.ofSeconds(3), () -> delays.paused().isEmpty()))
                .as("resumed after the 200 ms level, not a year on").isTrue();
    }

    @Test
    void aRebalanceLeavesNoPartitionPausedThatDoesNotWait() throws Exception {
        start();
        assertThat(await(Duration.ofSeconds(5), () -> delays.assigned().size() == 2)).isTrue();
        delayConsumer.addRecord(record(longLevel, 0, "long", System.currentTimeMillis() + 60_000));
        assertThat(await(Duration.ofSeconds(5), () -> delayConsumer.paused().contains(longLevel))).isTrue();

        // the work partition is revoked, and its delay partitions with it (the paused one too); then it comes back
        consumer.schedulePollTask(() -> assign(List.of()));
        assertThat(await(Duration.ofSeconds(5), () -> delays.assigned().isEmpty())).isTrue();
        assertThat(await(Duration.ofSeconds(5), () -> delays.paused().isEmpty())).isTrue();
        assertThat(pausedAndAssigned()).isEmpty();
        consumer.schedulePollTask(() -> assign(List.of(work)));
        assertThat(await(Duration.ofSeconds(5), () -> delays.assigned().contains(longLevel))).isTrue();
        consumer.addRecord(record(work, 0, "after", 0));
        assertThat(await(Duration.ofSeconds(5), () -> handled.contains("after"))).isTrue();
        assertThat(pausedAndAssigned()).as("nothing waits: MockConsumer does not deliver a record twice").isEmpty();
        assertThat(delays.paused()).isEmpty();
        assertThat(loop.paused()).isEmpty();
    }

    @Test
    void aDelayTopicCreatedAgainIsReadFromItsStartNotFromTheOldTopicsPositionOrCommittedOffset() throws Exception {
        start();
        assertThat(await(Duration.ofSeconds(5), () -> delays.assigned().size() == 2)).isTrue();
        delayConsumer.addRecord(record(shortLevel, 0, "before", System.currentTimeMillis() - 1));
        assertThat(await(Duration.ofSeconds(5), () -> handled.contains("before"))).isTrue();
        assertThat(await(Duration.ofSeconds(5), () -> {
            OffsetAndMetadata c = delayConsumer.committed(Set.of(shortLevel)).get(shortLevel);
            return c != null && c.offset() == 1;
        })).as("the old topic's offset committed").isTrue();
        long longBefore = delayConsumer.position(longLevel);

        // the topic was deleted and created again: its copies start at offset 0 again, below the
        // position and the committed offset the delay group kept
        delays.topicsCreatedAgain(Set.of(shortLevel.topic()));
        assertThat(await(Duration.ofSeconds(5), () -> delayConsumer.position(shortLevel) == 0))
                .as("read from the new topic's start").isTrue();
        delayConsumer.addRecord(record(shortLevel, 0, "after", System.currentTimeMillis() - 1));
        assertThat(await(Duration.ofSeconds(5), () -> handled.contains("after"))).isTrue();
        assertThat(delayConsumer.position(longLevel)).as("a topic not created again keeps its place").isEqualTo(longBefore);
    }

    @Test
    void aRetryKeptInMemoryOfARecordInADelayTopicCreatedAgainGoesToTheNewTopicNotLost() throws Exception {
        MemoryRetries memory = new MemoryRetries(Duration.ofMinutes(1), 10);
        start(PollLoop.FULL_HOLD, memory);
        assertThat(await(Duration.ofSeconds(5), () -> delays.assigned().size() == 2)).isTrue();
        ConsumerRecord<byte[], byte[]> copy = record(shortLevel, 0, "fail-once", System.currentTimeMillis() - 1);
        copy.headers().add(KafkaHeaders.ORIGIN, "orders/0/7".getBytes(StandardCharsets.UTF_8));
        delayConsumer.addRecord(copy);
        assertThat(await(Duration.ofSeconds(5), () -> memory.kept() == 1)).as("its retry kept in memory, 30 s ahead").isTrue();
        assertThat(producer.history()).isEmpty();

        // the old topic and the record in it are gone: dropping the retry would lose the record
        delays.topicsCreatedAgain(Set.of(shortLevel.topic()));
        assertThat(await(Duration.ofSeconds(5), () -> producer.history().size() == 1)).as("sent to its delay topic").isTrue();
        assertThat(producer.history().get(0).topic()).isEqualTo(longLevel.topic());
        assertThat(new String(producer.history().get(0).headers().lastHeader(KafkaHeaders.ORIGIN).value(),
                StandardCharsets.UTF_8)).isEqualTo("orders/0/7");
        assertThat(memory.kept()).isZero();
    }
}
