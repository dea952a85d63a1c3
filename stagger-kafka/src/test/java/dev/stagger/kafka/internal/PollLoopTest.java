package dev.stagger.kafka.internal;

import static org.assertj.core.api.Assertions.assertThat;

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
import org.apache.kafka.clients.producer.MockProducer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Which partitions the poll loop pauses, on kafka-clients' MockConsumer (real time, short waits, bounded by deadlines). */
class PollLoopTest {
    private final TopicSet topics = new TopicSet("orders", new long[] {200, 60_000});
    private final TopicPartition work = new TopicPartition("orders", 0);
    private final TopicPartition shortLevel = new TopicPartition("orders.stagger.retry-200", 0);
    private final TopicPartition longLevel = new TopicPartition("orders.stagger.retry-60000", 0);
    private final MockConsumer<byte[], byte[]> consumer = new MockConsumer<>("earliest");
    private final Set<String> handled = ConcurrentHashMap.newKeySet();
    private final ExecutorService handlers = Executors.newFixedThreadPool(2);
    private PollLoop loop;
    private Thread poller;

    @AfterEach
    void stop() throws InterruptedException {
        if (loop != null) {
            loop.stop();
            poller.join(5_000);
        }
        handlers.shutdownNow();
    }

    private void start() {
        BooleanSupplier no = () -> false;
        RecordProcessor processor = new RecordProcessor(topics, new MockProducer<>(true, null, new ByteArraySerializer(),
                new ByteArraySerializer()), new RetryStep("orders", RetryPolicy.background(), Clock.system(),
                RandomSource.seeded(1), Nesting.DEFER), m -> handled.add(new String(m.value(), StandardCharsets.UTF_8)),
                Clock.system(), RandomSource.seeded(1), 1_000, 86_400_000, () -> { }, no, no,
                (r, o, a, f, n, d, reason, failure) -> { });
        loop = new PollLoop(consumer, topics, processor, handlers, Clock.system(), 100, Duration.ofSeconds(1), no);
        consumer.schedulePollTask(() -> assign(List.of(work, shortLevel, longLevel)));
        poller = new Thread(loop, "test-poll");
        poller.start();
    }

    private void assign(List<TopicPartition> partitions) {
        consumer.rebalance(partitions);
        Map<TopicPartition, Long> zero = new java.util.HashMap<>();
        partitions.forEach(p -> zero.put(p, 0L));
        consumer.updateBeginningOffsets(zero);
    }

    /** What the consumer has paused among its partitions (MockConsumer keeps a revoked partition's pause; a real one does not). */
    private Set<TopicPartition> pausedAndAssigned() {
        Set<TopicPartition> paused = new java.util.HashSet<>(consumer.paused());
        paused.retainAll(consumer.assignment());
        return paused;
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

    @Test
    void onlyTheDelayPartitionWhoseHeadIsNotDueIsPaused() throws Exception {
        start();
        assertThat(await(Duration.ofSeconds(5), () -> loop.assigned().size() == 3)).isTrue();
        long now = System.currentTimeMillis();
        consumer.addRecord(record(longLevel, 0, "long", now + 60_000));
        consumer.addRecord(record(shortLevel, 0, "short", now - 1));
        consumer.addRecord(record(work, 0, "work", 0));

        assertThat(await(Duration.ofSeconds(5), () -> handled.containsAll(List.of("work", "short")))).isTrue();
        assertThat(await(Duration.ofSeconds(5), () -> consumer.paused().contains(longLevel))).isTrue();
        assertThat(consumer.paused()).containsExactly(longLevel);
        assertThat(loop.paused()).containsExactly(longLevel);
        assertThat(handled).doesNotContain("long");
    }

    @Test
    void aDelayRecordStampedFarAheadWaitsNoLongerThanItsLevel() throws Exception {
        start();
        assertThat(await(Duration.ofSeconds(5), () -> loop.assigned().size() == 3)).isTrue();
        ConsumerRecord<byte[], byte[]> r = record(shortLevel, 0, "stamped", 0);
        consumer.addRecord(new ConsumerRecord<>(r.topic(), r.partition(), r.offset(),
                System.currentTimeMillis() + Duration.ofDays(365).toMillis(), TimestampType.CREATE_TIME, 1, 7, r.key(),
                r.value(), r.headers(), Optional.empty()));
        assertThat(await(Duration.ofSeconds(5), () -> loop.paused().contains(shortLevel))).isTrue();
        assertThat(await(Duration.ofSeconds(3), () -> loop.paused().isEmpty()))
                .as("resumed after the 200 ms level, not a year on").isTrue();
    }

    @Test
    void aRebalanceLeavesNoPartitionPausedThatDoesNotWait() throws Exception {
        start();
        assertThat(await(Duration.ofSeconds(5), () -> loop.assigned().size() == 3)).isTrue();
        consumer.addRecord(record(longLevel, 0, "long", System.currentTimeMillis() + 60_000));
        assertThat(await(Duration.ofSeconds(5), () -> consumer.paused().contains(longLevel))).isTrue();

        // the paused partition is revoked; then it comes back with the others
        consumer.schedulePollTask(() -> assign(List.of(work, shortLevel)));
        assertThat(await(Duration.ofSeconds(5), () -> !loop.assigned().contains(longLevel))).isTrue();
        assertThat(await(Duration.ofSeconds(5), () -> loop.paused().isEmpty())).isTrue();
        assertThat(pausedAndAssigned()).isEmpty();
        consumer.schedulePollTask(() -> assign(List.of(work, shortLevel, longLevel)));
        assertThat(await(Duration.ofSeconds(5), () -> loop.assigned().contains(longLevel))).isTrue();
        consumer.addRecord(record(work, 0, "after", 0));
        assertThat(await(Duration.ofSeconds(5), () -> handled.contains("after"))).isTrue();
        assertThat(pausedAndAssigned()).as("nothing waits: MockConsumer does not deliver a record twice").isEmpty();
        assertThat(loop.paused()).isEmpty();
    }
}
