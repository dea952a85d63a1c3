package dev.stagger.kafka.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.stagger.Backoff;
import dev.stagger.Nesting;
import dev.stagger.RandomSource;
import dev.stagger.RetryPolicy;
import dev.stagger.internal.RetryStep;
import dev.stagger.kafka.KafkaHandler;
import dev.stagger.testing.VirtualClock;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.MockProducer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.Test;

/**
 * Without key order a lane takes a poll's records in one hand-off and handles them in a batch:
 * one task for the handler threads however many records come while it runs, the committable
 * offset never past a record that is not settled, and the rest of a batch left to be consumed
 * again when a record is not settled or the lane is revoked. The test runs the handler threads'
 * tasks by hand.
 */
class LaneBatchTest {
    private final VirtualClock clock = new VirtualClock();
    private final TopicSet topics = new TopicSet("orders", new long[] {200});
    private final List<String> handled = new ArrayList<>();
    private final List<Runnable> tasks = new ArrayList<>();
    private final AtomicBoolean forced = new AtomicBoolean();
    private Lane lane;

    /** "stop" is interrupted by a forced shutdown (not settled); "revoke" has its lane revoked while it runs. */
    private final KafkaHandler handler = m -> {
        String value = new String(m.value(), StandardCharsets.UTF_8);
        handled.add(value);
        if (value.equals("stop")) {
            forced.set(true);
            throw new InterruptedException("forced shutdown");
        }
        if (value.equals("revoke")) {
            Thread revoking = new Thread(() -> {
                try {
                    lane.revokeAndAwait(0, true);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
            revoking.start();
            revoking.join();
        }
    };

    private Lane lane() {
        RetryPolicy policy = RetryPolicy.builder().maxAttempts(3).backoff(Backoff.fixed(Duration.ofMillis(150))).build();
        MockProducer<byte[], byte[]> producer = new MockProducer<>(true, null, new ByteArraySerializer(), new ByteArraySerializer());
        RecordProcessor processor = new RecordProcessor(topics, producer,
                new RetryStep("orders", policy, clock, RandomSource.seeded(7), Nesting.DEFER), handler, clock,
                RandomSource.seeded(7), 1_000, Duration.ofDays(1).toMillis(), () -> { }, () -> false, forced::get,
                (record, outcome, attempt, firstAt, nanos, delay, reason, failure) -> { });
        lane = new Lane(new TopicPartition("orders", 0), -1, tasks::add, processor, () -> false, null, null);
        return lane;
    }

    private static List<ConsumerRecord<byte[], byte[]>> records(long from, String... values) {
        List<ConsumerRecord<byte[], byte[]>> out = new ArrayList<>();
        for (String v : values) {
            out.add(new ConsumerRecord<>("orders", 0, from++, null, v.getBytes(StandardCharsets.UTF_8)));
        }
        return out;
    }

    private void runTasks() {
        while (!tasks.isEmpty()) {
            tasks.remove(0).run();
        }
    }

    @Test
    void recordsAddedWhileALaneDrainsNeedNoOtherHandOff() {
        Lane lane = lane();
        lane.addAll(records(10, "a", "b", "c"));
        lane.addAll(records(13, "d", "e"));
        assertThat(tasks).as("one task for both polls' records").hasSize(1);

        runTasks();

        assertThat(handled).containsExactly("a", "b", "c", "d", "e");
        assertThat(lane.done()).isEqualTo(15);
        assertThat(lane.takeRewind()).isEqualTo(-1);
    }

    @Test
    void aRecordNotSettledStopsTheBatchAndIsConsumedAgainFromItself() {
        Lane lane = lane();
        lane.addAll(records(10, "a", "stop", "c"));

        runTasks();

        assertThat(handled).as("the rest of the batch waits for the rewind").containsExactly("a", "stop");
        assertThat(lane.done()).as("committed up to the record not settled, not past it").isEqualTo(11);
        assertThat(lane.takeRewind()).isEqualTo(11);
    }

    @Test
    void aRevokedLaneHandlesNoMoreOfItsBatch() {
        Lane lane = lane();
        lane.addAll(records(10, "a", "revoke", "c", "d"));

        runTasks();

        assertThat(handled).containsExactly("a", "revoke");
        assertThat(lane.done()).as("the records handled are committed with the revocation").isEqualTo(12);
    }
}
