package dev.stagger.kafka.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.stagger.Backoff;
import dev.stagger.EndReason;
import dev.stagger.Nesting;
import dev.stagger.RandomSource;
import dev.stagger.RetryPolicy;
import dev.stagger.internal.RetryStep;
import dev.stagger.kafka.KafkaHandler;
import dev.stagger.kafka.KafkaHeaders;
import dev.stagger.kafka.RecordListener;
import dev.stagger.testing.VirtualClock;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.Callback;
import org.apache.kafka.clients.producer.MockProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.errors.NetworkException;
import org.apache.kafka.common.errors.RecordTooLargeException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;

/** What becomes of a record whose copy cannot be produced, on a virtual clock and a producer that fails as told. */
class RecordProcessorTest {
    private final VirtualClock clock = new VirtualClock();
    private final TopicSet topics = new TopicSet("orders", new long[] {200, 1_000});
    private final List<RecordProcessor.Outcome> outcomes = new ArrayList<>();
    private final List<Duration> delays = new ArrayList<>();
    private final AtomicBoolean closing = new AtomicBoolean();
    private final AtomicInteger recreated = new AtomicInteger();

    /** A producer that fails each send {@code failure} says (null: the send succeeds). */
    static final class ScriptedProducer extends MockProducer<byte[], byte[]> {
        private final Function<ProducerRecord<byte[], byte[]>, @Nullable RuntimeException> failure;
        final List<ProducerRecord<byte[], byte[]>> attempted = new ArrayList<>();

        ScriptedProducer(Function<ProducerRecord<byte[], byte[]>, @Nullable RuntimeException> failure) {
            super(true, null, new ByteArraySerializer(), new ByteArraySerializer());
            this.failure = failure;
        }

        @Override
        public synchronized Future<RecordMetadata> send(ProducerRecord<byte[], byte[]> record, Callback callback) {
            attempted.add(record);
            RuntimeException e = failure.apply(record);
            return e != null ? CompletableFuture.failedFuture(e) : super.send(record, callback);
        }
    }

    private RecordProcessor processor(ScriptedProducer producer, KafkaHandler handler) {
        RetryPolicy policy = RetryPolicy.builder().maxAttempts(3).backoff(Backoff.fixed(Duration.ofMillis(150))).build();
        return new RecordProcessor(topics, producer, new RetryStep("orders", policy, clock, RandomSource.seeded(7), Nesting.DEFER),
                handler, clock, RandomSource.seeded(7), 1_000, Duration.ofDays(1).toMillis(), recreated::incrementAndGet,
                closing::get, () -> false, (record, outcome, attempt, firstAt, nanos, delay, reason, failure) -> {
                    outcomes.add(outcome);
                    delays.add(delay);
                });
    }

    @Test
    void theHandlersTimeIsMeasuredOnTheClockForListenersAndNotReadWithoutThem() {
        KafkaHandler takes25ms = m -> clock.advance(Duration.ofMillis(25));
        List<Long> nanos = new ArrayList<>();
        RecordProcessor.Events events = (record, outcome, attempt, firstAt, handlerNanos, delay, reason, failure) ->
                nanos.add(handlerNanos);
        RecordListener listener = event -> { };
        RetryPolicy policy = RetryPolicy.builder().maxAttempts(3).build();
        for (RecordListener[] listeners : List.of(new RecordListener[] {listener}, new RecordListener[0])) {
            RecordProcessor p = new RecordProcessor(topics, new ScriptedProducer(r -> null),
                    new RetryStep("orders", policy, clock, RandomSource.seeded(7), Nesting.DEFER), takes25ms, clock,
                    RandomSource.seeded(7), 1_000, Duration.ofDays(1).toMillis(), recreated::incrementAndGet, closing::get,
                    () -> false, events, false, listeners);
            long before = clock.nanoTime();
            assertThat(p.handle(record(new byte[10]))).isEqualTo(RecordProcessor.Outcome.SUCCEEDED);
            assertThat(clock.nanoTime() - before).isEqualTo(Duration.ofMillis(25).toNanos());
        }
        // with a listener, the 25 ms the handler took on the clock; without one nobody hears it, and the clock is not read
        assertThat(nanos).containsExactly(Duration.ofMillis(25).toNanos(), 0L);
    }

    private static ConsumerRecord<byte[], byte[]> record(byte[] value) {
        return new ConsumerRecord<>("orders", 0, 42, "k".getBytes(StandardCharsets.UTF_8), value);
    }

    private static final KafkaHandler FAILS = m -> {
        throw new IllegalStateException("down");
    };

    @Test
    void aCopyThatCannotBeProducedIsProducedAgainOnlyAfterTheEnginesGrowingWaits() {
        AtomicInteger sends = new AtomicInteger();
        ScriptedProducer producer = new ScriptedProducer(r -> sends.incrementAndGet() <= 3 ? new NetworkException("no broker") : null);
        assertThat(processor(producer, FAILS).process(record(new byte[10]))).isTrue();

        assertThat(producer.attempted).hasSize(4);
        assertThat(producer.history()).hasSize(1);
        assertThat(producer.history().get(0).topic()).isEqualTo("orders.stagger.retry-200");
        // 100 ms doubling, equal jitter: each wait in [d/2, d]
        assertThat(clock.sleeps()).hasSize(3);
        long[] base = {100, 200, 400};
        for (int i = 0; i < 3; i++) {
            assertThat(clock.sleeps().get(i).toMillis()).isBetween(base[i] / 2, base[i]);
        }
        assertThat(outcomes).containsExactly(RecordProcessor.Outcome.RETURNED, RecordProcessor.Outcome.RETURNED,
                RecordProcessor.Outcome.RETURNED, RecordProcessor.Outcome.RETRIED);
    }

    @Test
    void aRecordWhoseCopyCannotBeProducedIsNotSettledWhenTheConsumerStops() {
        ScriptedProducer producer = new ScriptedProducer(r -> {
            closing.set(true); // the consumer stops while the broker is away
            return new NetworkException("no broker");
        });
        assertThat(processor(producer, FAILS).process(record(new byte[10]))).isFalse();
        assertThat(producer.history()).isEmpty();
        assertThat(clock.sleeps()).isEmpty();
    }

    @Test
    void aMissingTopicIsCreatedAgainOnceAndTheCopyGoesAtOnce() {
        AtomicInteger sends = new AtomicInteger();
        ScriptedProducer producer = new ScriptedProducer(r -> sends.incrementAndGet() == 1
                ? new UnknownTopicOrPartitionException("gone") : null);
        assertThat(processor(producer, FAILS).process(record(new byte[10]))).isTrue();
        assertThat(recreated).hasValue(1);
        assertThat(clock.sleeps()).isEmpty();
        assertThat(producer.history()).hasSize(1);
    }

    @Test
    void aCopyTooLargeEndsAsADeadLetterWithoutPayloadSayingWhereTheRecordIs() {
        ScriptedProducer producer = new ScriptedProducer(r -> r.value() != null ? new RecordTooLargeException("too large") : null);
        assertThat(processor(producer, FAILS).process(record(new byte[10]))).isTrue();

        assertThat(producer.attempted).extracting(ProducerRecord::topic)
                .containsExactly("orders.stagger.retry-200", "orders.stagger.dlt", "orders.stagger.dlt");
        ProducerRecord<byte[], byte[]> dead = producer.history().get(0);
        assertThat(dead.value()).isNull();
        assertThat(dead.key()).isNull();
        assertThat(text(dead, KafkaHeaders.DEAD_CAUSE)).startsWith("UNPUBLISHABLE: ").contains("orders/0/42");
        assertThat(text(dead, KafkaHeaders.END_REASON)).isEqualTo(EndReason.NOT_RETRYABLE.name());
        assertThat(clock.sleeps()).as("the record's own fault: no wait, no loop").isEmpty();
        assertThat(outcomes).containsExactly(RecordProcessor.Outcome.DEAD_LETTERED);
    }

    private static String text(ProducerRecord<byte[], byte[]> r, String name) {
        Header h = r.headers().lastHeader(name);
        return h == null ? null : new String(h.value(), StandardCharsets.UTF_8);
    }
}
