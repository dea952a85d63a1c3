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
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.Callback;
import org.apache.kafka.clients.producer.MockProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.NetworkException;
import org.apache.kafka.common.errors.RecordTooLargeException;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.Test;

/**
 * A retry's copy is sent without the handler thread waiting for it: the partition's next records
 * are handled meanwhile, and the partition's committable offset stays at the record until the
 * copy is acknowledged. On a virtual clock, with a producer the test acknowledges by hand.
 */
class UnacknowledgedCopyTest {
    private final VirtualClock clock = new VirtualClock();
    private final TopicSet topics = new TopicSet("orders", new long[] {200});
    private final List<String> handled = new ArrayList<>();
    private final List<RecordProcessor.Outcome> outcomes = new ArrayList<>();

    /** Fails the records whose value is "fail". */
    private final KafkaHandler handler = m -> {
        String value = new String(m.value(), StandardCharsets.UTF_8);
        handled.add(value);
        if (value.equals("fail")) {
            throw new IllegalStateException("down");
        }
    };

    private Lane lane(MockProducer<byte[], byte[]> producer) {
        return lane(producer, null);
    }

    private Lane lane(MockProducer<byte[], byte[]> producer, KeyOrder keyOrder) {
        RetryPolicy policy = RetryPolicy.builder().maxAttempts(3).backoff(Backoff.fixed(Duration.ofMillis(150))).build();
        RecordProcessor processor = new RecordProcessor(topics, producer,
                new RetryStep("orders", policy, clock, RandomSource.seeded(7), Nesting.DEFER), handler, clock,
                RandomSource.seeded(7), 1_000, Duration.ofDays(1).toMillis(), () -> { }, () -> false, () -> false,
                (record, outcome, attempt, firstAt, nanos, delay, reason, failure) -> outcomes.add(outcome));
        return new Lane(new TopicPartition("orders", 0), -1, Runnable::run, processor, () -> false, keyOrder, null);
    }

    private static ConsumerRecord<byte[], byte[]> record(long offset, String value) {
        return new ConsumerRecord<>("orders", 0, offset, "k".getBytes(StandardCharsets.UTF_8),
                value.getBytes(StandardCharsets.UTF_8));
    }

    @Test
    void theNextRecordsAreHandledWhileARetrysCopyWaitsForItsAcknowledgement() {
        MockProducer<byte[], byte[]> producer = new MockProducer<>(false, null, new ByteArraySerializer(), new ByteArraySerializer());
        Lane lane = lane(producer);
        lane.add(record(42, "fail"));
        lane.add(record(43, "ok"));

        assertThat(handled).containsExactly("fail", "ok");
        assertThat(producer.history()).singleElement().satisfies(r -> assertThat(r.topic()).isEqualTo("orders.stagger.retry-200"));
        assertThat(outcomes).as("the retry is told once acknowledged").containsExactly(RecordProcessor.Outcome.SUCCEEDED);
    }

    @Test
    void theOffsetIsNotCommittedPastARecordWhoseCopyIsNotYetAcknowledged() {
        MockProducer<byte[], byte[]> producer = new MockProducer<>(false, null, new ByteArraySerializer(), new ByteArraySerializer());
        Lane lane = lane(producer);
        lane.add(record(42, "fail"));
        lane.add(record(43, "ok"));
        assertThat(lane.done()).isEqualTo(42);

        assertThat(producer.completeNext()).isTrue();
        assertThat(lane.done()).isEqualTo(44);
        assertThat(outcomes).containsExactly(RecordProcessor.Outcome.SUCCEEDED, RecordProcessor.Outcome.RETRIED);
    }

    @Test
    void inKeyOrderAKeysNextRecordGoesOnWhenItsRetrysCopyEndedAsADeadLetter() {
        MockProducer<byte[], byte[]> producer = new MockProducer<>(true, null, new ByteArraySerializer(), new ByteArraySerializer()) {
            @Override
            public synchronized Future<RecordMetadata> send(ProducerRecord<byte[], byte[]> record, Callback callback) {
                if (record.topic().startsWith("orders.stagger.retry-")) {
                    RecordTooLargeException tooLarge = new RecordTooLargeException("the copy is too large");
                    callback.onCompletion(null, tooLarge);
                    return java.util.concurrent.CompletableFuture.failedFuture(tooLarge);
                }
                return super.send(record, callback);
            }
        };
        Lane lane = lane(producer, new KeyOrder(10, 100));
        lane.add(record(42, "fail"));
        assertThat(producer.history()).singleElement().satisfies(r -> assertThat(r.topic()).isEqualTo("orders.stagger.dlt"));

        lane.add(record(43, "ok"));
        assertThat(handled).as("the key's retry ended: its next record is not held").containsExactly("fail", "ok");
        assertThat(lane.held()).isZero();
        assertThat(lane.done()).isEqualTo(44);
    }

    @Test
    void aCopyWhoseSendFailsIsProducedAgainBeforeItsRecordIsCommitted() {
        AtomicInteger sends = new AtomicInteger();
        MockProducer<byte[], byte[]> producer = new MockProducer<>(true, null, new ByteArraySerializer(), new ByteArraySerializer()) {
            @Override
            public synchronized Future<RecordMetadata> send(ProducerRecord<byte[], byte[]> record, Callback callback) {
                if (sends.incrementAndGet() == 1) {
                    NetworkException down = new NetworkException("no broker");
                    callback.onCompletion(null, down);
                    return java.util.concurrent.CompletableFuture.failedFuture(down);
                }
                return super.send(record, callback);
            }
        };
        Lane lane = lane(producer);
        lane.add(record(42, "fail"));

        assertThat(sends).hasValue(2);
        assertThat(producer.history()).hasSize(1);
        assertThat(lane.done()).isEqualTo(43);
        assertThat(outcomes).containsExactly(RecordProcessor.Outcome.RETURNED, RecordProcessor.Outcome.RETRIED);
        assertThat(clock.sleeps()).as("produced again after a wait, as a copy that was waited for").hasSize(1);
    }
}
