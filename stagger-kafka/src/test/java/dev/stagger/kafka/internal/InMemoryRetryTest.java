package dev.stagger.kafka.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.stagger.Backoff;
import dev.stagger.Nesting;
import dev.stagger.RandomSource;
import dev.stagger.RetryPolicy;
import dev.stagger.internal.RetryStep;
import dev.stagger.kafka.KafkaHandler;
import dev.stagger.kafka.KafkaHeaders;
import dev.stagger.testing.VirtualClock;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.MockProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.Test;

/**
 * Retries kept in memory ({@link MemoryRetries}) instead of a delay topic: on a virtual clock, one
 * lane, its handler run on the calling thread, a producer the test completes by hand when asked.
 */
class InMemoryRetryTest {
    private final VirtualClock clock = new VirtualClock();
    private final TopicSet topics = new TopicSet("orders", new long[] {200, 60_000});
    /** What the handler saw: value, attempt and id of each run. */
    private final List<String> handled = new ArrayList<>();
    private final List<RecordProcessor.Outcome> outcomes = new ArrayList<>();
    /** The retries' places of the lane made last by {@link #lane(Duration, int)}. */
    private MemoryRetries memory;
    /** Due times the lane told the poll loop about. */
    private final List<Long> told = new ArrayList<>();

    /** "fail-N" fails its first N attempts; anything else succeeds. */
    private final KafkaHandler handler = m -> {
        String value = new String(m.value(), StandardCharsets.UTF_8);
        handled.add(value + "#" + m.attempt() + "@" + m.id());
        if (value.startsWith("fail-") && m.attempt() <= Integer.parseInt(value.substring(5))) {
            throw new IllegalStateException("down");
        }
    };

    private final MockProducer<byte[], byte[]> producer =
            new MockProducer<>(false, null, new ByteArraySerializer(), new ByteArraySerializer());

    /** A lane that keeps waits up to {@code upTo} in memory, {@code max} at once; backoff 100 ms doubling. */
    private Lane lane(Duration upTo, int max) {
        memory = new MemoryRetries(upTo, max);
        return lane(memory);
    }

    private Lane lane(MemoryRetries memory) {
        RetryPolicy policy = RetryPolicy.builder().maxAttempts(4).backoff(Backoff.exponential(Duration.ofMillis(100))).build();
        RecordProcessor processor = new RecordProcessor(topics, producer,
                new RetryStep("orders", policy, clock, RandomSource.seeded(7), Nesting.DEFER), handler, clock,
                RandomSource.seeded(7), 1_000, Duration.ofDays(1).toMillis(), () -> { }, () -> false, () -> false,
                (record, outcome, attempt, firstAt, nanos, delay, reason, failure) -> outcomes.add(outcome));
        return new Lane(new TopicPartition("orders", 0), -1, Runnable::run, processor, () -> false, null, null,
                Integer.MAX_VALUE, () -> { }, memory, told::add);
    }

    private static ConsumerRecord<byte[], byte[]> record(long offset, String value) {
        return new ConsumerRecord<>("orders", 0, offset, "k".getBytes(StandardCharsets.UTF_8),
                value.getBytes(StandardCharsets.UTF_8));
    }

    private static long number(ProducerRecord<byte[], byte[]> copy, String header) {
        return Long.parseLong(new String(copy.headers().lastHeader(header).value(), StandardCharsets.UTF_8));
    }

    @Test
    void aShortRetryWaitsInMemoryAndRunsWhenDueWithTheNextAttemptAndTheSameId() {
        Lane lane = lane(Duration.ofSeconds(1), 10);
        long start = clock.currentTimeMillis();
        lane.add(record(42, "fail-1"));
        lane.add(record(43, "ok"));

        assertThat(producer.history()).as("no copy: the retry waits in memory").isEmpty();
        assertThat(told).containsExactly(start + 100);
        assertThat(memory.kept()).isEqualTo(1);
        assertThat(lane.done()).as("not committed past the record whose retry waits").isEqualTo(42);

        assertThat(lane.takeDue(start + 99)).as("not due: the next due time").isEqualTo(start + 100);
        assertThat(handled).containsExactly("fail-1#1@orders/0/42", "ok#1@orders/0/43");

        clock.advance(Duration.ofMillis(100));
        assertThat(lane.takeDue(clock.currentTimeMillis())).as("nothing left").isEqualTo(Long.MAX_VALUE);
        assertThat(handled).containsExactly("fail-1#1@orders/0/42", "ok#1@orders/0/43", "fail-1#2@orders/0/42");
        assertThat(lane.done()).isEqualTo(44);
        assertThat(memory.kept()).isZero();
        assertThat(outcomes).as("the retry is told when kept, as a copy's when acknowledged").containsExactly(
                RecordProcessor.Outcome.RETRIED, RecordProcessor.Outcome.SUCCEEDED, RecordProcessor.Outcome.SUCCEEDED);
        assertThat(producer.history()).isEmpty();
    }

    @Test
    void aRetryThatFailsAgainWithALongerWaitGoesToItsDelayTopicAndIsCommittedOnlyOnceAcknowledged() {
        Lane lane = lane(Duration.ofMillis(150), 10);
        lane.add(record(42, "fail-2"));
        clock.advance(Duration.ofMillis(100));
        lane.takeDue(clock.currentTimeMillis());

        assertThat(handled).containsExactly("fail-2#1@orders/0/42", "fail-2#2@orders/0/42");
        assertThat(producer.history()).as("the second wait (200 ms) is past the bound: a copy").singleElement().satisfies(c -> {
            assertThat(c.topic()).isEqualTo("orders.stagger.retry-200");
            assertThat(number(c, KafkaHeaders.ATTEMPT)).isEqualTo(3);
            assertThat(new String(c.headers().lastHeader(KafkaHeaders.ORIGIN).value(), StandardCharsets.UTF_8))
                    .isEqualTo("orders/0/42");
            assertThat(c.headers().headers(KafkaHeaders.ERRORS)).as("both failures in its history").hasSize(2);
        });
        assertThat(memory.kept()).isZero();
        assertThat(lane.done()).as("its copy is not acknowledged yet").isEqualTo(42);

        assertThat(producer.completeNext()).isTrue();
        assertThat(lane.done()).isEqualTo(43);
    }

    @Test
    void aWaitLongerThanTheBoundAndARetryPastTheCountGoToTheirDelayTopic() {
        Lane lane = lane(Duration.ofMillis(99), 10);
        lane.add(record(42, "fail-1"));
        assertThat(producer.history()).as("100 ms is longer than 99 ms").hasSize(1);
        assertThat(memory.kept()).isZero();

        MemoryRetries one = new MemoryRetries(Duration.ofSeconds(1), 1);
        Lane full = lane(one);
        full.add(record(50, "fail-1"));
        full.add(record(51, "fail-1"));
        assertThat(one.kept()).isEqualTo(1);
        assertThat(producer.history()).as("the second has no place left").hasSize(2);
        assertThat(producer.history().get(1).headers().lastHeader(KafkaHeaders.ORIGIN).value())
                .isEqualTo("orders/0/51".getBytes(StandardCharsets.UTF_8));

        clock.advance(Duration.ofMillis(100));
        full.takeDue(clock.currentTimeMillis());
        assertThat(one.kept()).as("its place is given back when it runs").isZero();
    }

    @Test
    void aRevokedLaneSendsItsKeptRetriesToTheirDelayTopicForWhatRemainsBeforeItIsCommittedPast() throws Exception {
        Lane lane = lane(Duration.ofSeconds(1), 10);
        long dueAt = clock.currentTimeMillis() + 100;
        lane.add(record(42, "fail-1"));
        lane.add(record(43, "ok"));
        clock.advance(Duration.ofMillis(40));

        assertThat(lane.revokeAndAwait(0, true)).as("its copy is not acknowledged yet").isFalse();
        assertThat(producer.history()).singleElement().satisfies(c -> {
            assertThat(c.topic()).as("60 ms left: the smallest level").isEqualTo("orders.stagger.retry-200");
            assertThat(number(c, KafkaHeaders.DUE_AT)).as("due when it was in memory").isEqualTo(dueAt);
            assertThat(number(c, KafkaHeaders.ATTEMPT)).isEqualTo(2);
        });
        assertThat(lane.done()).isEqualTo(42);
        assertThat(producer.completeNext()).isTrue();
        assertThat(lane.done()).isEqualTo(44);
        assertThat(lane.revokeAndAwait(0, true)).isTrue();

        clock.advance(Duration.ofMillis(100));
        lane.takeDue(clock.currentTimeMillis());
        assertThat(handled).as("not run again by the revoked lane").hasSize(2);
        assertThat(outcomes).as("the retry told once").containsExactly(RecordProcessor.Outcome.RETRIED,
                RecordProcessor.Outcome.SUCCEEDED);
    }

    @Test
    void aLostLaneDropsItsKeptRetriesAndIsNeverCommittedPastThem() throws Exception {
        MemoryRetries memory = new MemoryRetries(Duration.ofSeconds(1), 10);
        Lane lane = lane(memory);
        lane.add(record(42, "ok"));
        lane.add(record(43, "fail-1"));
        lane.add(record(44, "ok"));

        assertThat(lane.revokeAndAwait(0, false)).isTrue();
        assertThat(producer.history()).as("its next owner consumes it again from the committed offset").isEmpty();
        assertThat(lane.done()).isEqualTo(43);
        assertThat(memory.kept()).isZero();
    }

    @Test
    void aCopyWhoseSendFailsWhenParkedLeavesItsRecordToBeConsumedAgain() throws Exception {
        Lane lane = lane(Duration.ofSeconds(1), 10);
        lane.add(record(42, "fail-1"));
        lane.add(record(43, "ok"));
        assertThat(lane.revokeAndAwait(0, true)).isFalse();

        assertThat(producer.errorNext(new org.apache.kafka.common.errors.NetworkException("no broker"))).isTrue();
        assertThat(lane.done()).as("never committed past it").isEqualTo(42);
        assertThat(lane.revokeAndAwait(0, true)).isTrue();
    }
}
