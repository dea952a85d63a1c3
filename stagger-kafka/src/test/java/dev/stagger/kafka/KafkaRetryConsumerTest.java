package dev.stagger.kafka;

import static org.assertj.core.api.Assertions.assertThat;

import dev.stagger.Backoff;
import dev.stagger.Decision;
import dev.stagger.RetryPolicy;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;

/** The consumer on the real broker (see {@link TestKafka}); short delay levels keep each test to seconds. */
class KafkaRetryConsumerTest extends BrokerTest {
    /** A failure whose retry should wait at least {@code wait}: the classifier reads it as a Retry-After hint. */
    static final class Later extends Exception {
        private static final long serialVersionUID = 1L;
        final Duration wait;

        Later(Duration wait) {
            super("try again in " + wait.toMillis() + " ms");
            this.wait = wait;
        }
    }

    static RetryPolicy policy(int maxAttempts) {
        return RetryPolicy.builder().maxAttempts(maxAttempts).backoff(Backoff.fixed(Duration.ofMillis(150)))
                .classifier((result, failure, context) -> failure instanceof Later l ? Decision.retryAfter(l.wait)
                        : failure instanceof IllegalArgumentException ? Decision.stop() : Decision.retry())
                .build();
    }

    private void send(String topic, String key, String value) throws Exception {
        TestKafka.send(producer, new ProducerRecord<>(topic, key.getBytes(StandardCharsets.UTF_8),
                value.getBytes(StandardCharsets.UTF_8)));
    }

    /** Attempts seen by the handler, by record value: each attempt's number and wall-clock time. */
    record Seen(String value, int attempt, long atMillis, String id) {
    }

    @Test
    void aRetryArrivesNoEarlierThanItsDelayAndWithinItsLevel() throws Exception {
        String topic = TestKafka.uniqueTopic("timing");
        List<Seen> seen = new CopyOnWriteArrayList<>();
        start(KafkaRetryConsumer.builder(topic, config, m -> {
            seen.add(new Seen(new String(m.value(), StandardCharsets.UTF_8), m.attempt(), System.currentTimeMillis(), m.id()));
            if (m.attempt() < 3) {
                throw new IllegalStateException("attempt " + m.attempt() + " fails");
            }
        }).policy(policy(5)));
        send(topic, "k", "v1");
        assertThat(TestKafka.await(WITHIN, () -> seen.size() >= 3)).as("three attempts, seen %s", seen).isTrue();
        for (int i = 1; i < 3; i++) {
            long gap = seen.get(i).atMillis() - seen.get(i - 1).atMillis();
            assertThat(gap).as("wait before attempt %d", i + 1).isGreaterThanOrEqualTo(150);
            assertThat(gap).as("wait before attempt %d: the 200 ms level plus the broker's latency", i + 1).isLessThan(2_200);
        }
        assertThat(seen).extracting(Seen::attempt).containsExactly(1, 2, 3);
        assertThat(seen).extracting(Seen::id).containsOnly(seen.get(0).id());
    }

    @Test
    void aPartitionPausedForAFullLaneIsFetchedAgainAsSoonAsTheLaneHasRoom() throws Exception {
        // Ten records a poll and a lane full at ten; the handler waits at every 20th record until the partition is
        // paused (after the lane has held the poll thread for 50 ms), so each 20 records pause it once. Were it resumed
        // only when the poll in progress times out (100 ms: nothing else is fetched), these 2,000 records would take 100
        // pauses of about 165 ms, 16.5 s; resumed at once, about 6.5 s (measured idle).
        String topic = TestKafka.uniqueTopic("full-lane");
        TestKafka.createTopic(config, topic, 1);
        int records = 2_000;
        for (int i = 0; i < records; i++) {
            producer.send(new ProducerRecord<>(topic, new byte[64]));
        }
        producer.flush();
        java.util.concurrent.atomic.LongAdder handled = new java.util.concurrent.atomic.LongAdder();
        java.util.concurrent.atomic.AtomicReference<KafkaRetryConsumer> self = new java.util.concurrent.atomic.AtomicReference<>();
        Map<String, Object> smallPolls = new java.util.HashMap<>(config);
        smallPolls.put("max.poll.records", 10);
        KafkaRetryConsumer consumer = build(KafkaRetryConsumer.builder(topic, smallPolls, m -> {
            if (m.offset() % 20 == 0) {
                TestKafka.await(Duration.ofSeconds(2), () -> !self.get().pausedPartitions().isEmpty());
            }
            handled.increment();
        }).maxPending(10));
        self.set(consumer);
        consumer.start();
        assertThat(TestKafka.await(Duration.ofSeconds(30), () -> handled.sum() > 0)).as("the group joined").isTrue();
        long started = System.nanoTime();
        assertThat(TestKafka.await(Duration.ofSeconds(30), () -> handled.sum() == records))
                .as("handled %d of %d within 30 s", handled.sum(), records).isTrue();
        assertThat(Duration.ofNanos(System.nanoTime() - started)).as("resumed at once, not at the poll's timeout")
                .isLessThan(Duration.ofMillis(11_000));
    }

    @Test
    void aShortRetryKeptInMemoryRunsWhenDueWhileTheRecordsBehindItGoOnAndNoCopyIsProduced() throws Exception {
        String topic = TestKafka.uniqueTopic("memory");
        List<Seen> seen = new CopyOnWriteArrayList<>();
        KafkaRetryConsumer consumer = start(KafkaRetryConsumer.builder(topic, config, m -> {
            String v = new String(m.value(), StandardCharsets.UTF_8);
            seen.add(new Seen(v, m.attempt(), System.currentTimeMillis(), m.id()));
            if (v.equals("fails once") && m.attempt() == 1) {
                throw new IllegalStateException("the first attempt fails");
            }
        }).policy(policy(3)).inMemoryRetries(Duration.ofSeconds(1), 100));
        send(topic, "k", "fails once");
        for (int i = 1; i <= 5; i++) {
            send(topic, "k", "ok " + i);
        }
        assertThat(TestKafka.await(WITHIN, () -> seen.size() >= 7)).as("seen %s", seen).isTrue();
        assertThat(TestKafka.await(WITHIN, () -> lagOf(topic) == 0)).as("every offset committed").isTrue();

        Seen first = seen.get(0);
        Seen retry = seen.stream().filter(s -> s.attempt() == 2).findFirst().orElseThrow();
        assertThat(retry.value()).isEqualTo("fails once");
        assertThat(retry.id()).isEqualTo(first.id()).isEqualTo(topic + "/0/0");
        assertThat(retry.atMillis() - first.atMillis()).as("its wait: no earlier than 150 ms, about one poll later at most")
                .isBetween(150L, 2_200L);
        assertThat(seen.indexOf(retry)).as("the records behind it went on while it waited, %s", seen).isEqualTo(6);
        assertThat(TestKafka.endOffsets(config, List.of(topic + ".stagger.retry-200"))).as("no copy in the delay topic").isZero();
        assertThat(consumer.retriesInMemory()).isZero();
    }

    @Test
    void aConsumerClosingSendsTheRetriesItKeepsToTheirDelayTopicsAndTheGroupRunsThemOnce() throws Exception {
        String topic = TestKafka.uniqueTopic("memory-close");
        List<Seen> seen = new CopyOnWriteArrayList<>();
        KafkaHandler handler = m -> {
            seen.add(new Seen(new String(m.value(), StandardCharsets.UTF_8), m.attempt(), System.currentTimeMillis(), m.id()));
            if (m.attempt() == 1) {
                throw new Later(Duration.ofSeconds(2));
            }
        };
        KafkaRetryConsumer first = start(KafkaRetryConsumer.builder(topic, config, handler).policy(policy(3))
                .inMemoryRetries(Duration.ofMinutes(1), 100));
        send(topic, "k", "v");
        assertThat(TestKafka.await(WITHIN, () -> first.retriesInMemory() == 1)).as("kept, seen %s", seen).isTrue();
        first.close();

        assertThat(lagOf(topic)).as("committed past it once its copy was acknowledged").isZero();
        List<ConsumerRecord<byte[], byte[]>> copies = TestKafka.readAll(config, topic + ".stagger.retry-3000", 1, WITHIN);
        assertThat(copies).singleElement().satisfies(c -> {
            assertThat(TestKafka.header(c, KafkaHeaders.ATTEMPT)).isEqualTo("2");
            assertThat(TestKafka.header(c, KafkaHeaders.ORIGIN)).isEqualTo(topic + "/0/0");
        });
        start(KafkaRetryConsumer.builder(topic, config, handler).policy(policy(3)));
        assertThat(TestKafka.await(WITHIN, () -> seen.size() >= 2)).isTrue();
        assertThat(TestKafka.await(Duration.ofSeconds(1), () -> seen.size() > 2)).as("run once, seen %s", seen).isFalse();
        assertThat(seen.get(1).attempt()).isEqualTo(2);
        assertThat(seen.get(1).id()).isEqualTo(seen.get(0).id());
        assertThat(seen.get(1).atMillis() - seen.get(0).atMillis()).as("no earlier than its wait").isGreaterThanOrEqualTo(2_000);
    }

    private long lagOf(String topic) {
        try {
            return CrashSafetyTest.lag(config, topic);
        } catch (Exception e) {
            return -1; // not readable yet: not done
        }
    }

    @Test
    void aShortRetryIsNotHeldBehindALongOne() throws Exception {
        String topic = TestKafka.uniqueTopic("short-long");
        Map<String, Long> secondAttempt = new ConcurrentHashMap<>();
        KafkaRetryConsumer consumer = start(KafkaRetryConsumer.builder(topic, config, m -> {
            String v = new String(m.value(), StandardCharsets.UTF_8);
            if (m.attempt() == 1) {
                throw new Later(v.equals("long") ? Duration.ofMillis(2_500) : Duration.ofMillis(100));
            }
            secondAttempt.put(v, System.currentTimeMillis());
        }).policy(policy(3)));
        long sent = System.currentTimeMillis();
        send(topic, "a", "long");
        send(topic, "b", "short");
        assertThat(TestKafka.await(WITHIN, () -> secondAttempt.containsKey("short"))).isTrue();
        assertThat(consumer.pausedPartitions()).as("only the long level's partition waits, paused")
                .containsExactly(new TopicPartition(topic + ".stagger.retry-3000", 0));
        assertThat(TestKafka.await(WITHIN, () -> secondAttempt.size() == 2)).isTrue();
        assertThat(secondAttempt.get("short")).isLessThan(secondAttempt.get("long"));
        assertThat(TestKafka.await(WITHIN, () -> consumer.pausedPartitions().isEmpty())).isTrue();
        assertThat(secondAttempt.get("short") - sent).as("the short retry's wait").isLessThan(2_500);
        assertThat(secondAttempt.get("long") - sent).as("the long retry's wait").isGreaterThanOrEqualTo(2_500);
    }

    @Test
    void theLastAttemptGoesToTheDeadLetterTopicWithItsHistoryAndEndReason() throws Exception {
        String topic = TestKafka.uniqueTopic("dead");
        List<RecordEvent> events = new CopyOnWriteArrayList<>();
        KafkaRetryConsumer consumer = start(KafkaRetryConsumer.builder(topic, config, m -> {
            throw new IllegalStateException("always fails, attempt " + m.attempt());
        }).policy(policy(3)).recordListener(events::add));
        send(topic, "k", "doomed");
        List<ConsumerRecord<byte[], byte[]>> dead = TestKafka.readAll(config, consumer.deadLetterTopic(), 1, WITHIN);
        assertThat(dead).hasSize(1);
        ConsumerRecord<byte[], byte[]> d = dead.get(0);
        assertThat(new String(d.value(), StandardCharsets.UTF_8)).isEqualTo("doomed");
        assertThat(new String(d.key(), StandardCharsets.UTF_8)).isEqualTo("k");
        assertThat(TestKafka.header(d, KafkaHeaders.END_REASON)).isEqualTo("EXHAUSTED");
        assertThat(TestKafka.header(d, KafkaHeaders.ATTEMPT)).isEqualTo("3");
        assertThat(TestKafka.header(d, KafkaHeaders.ORIGIN)).isEqualTo(topic + "/0/0");
        List<String> history = new java.util.ArrayList<>();
        d.headers().headers(KafkaHeaders.ERRORS).forEach(h -> history.add(new String(h.value(), StandardCharsets.UTF_8)));
        assertThat(history).hasSize(3);
        assertThat(history.get(2)).startsWith("attempt=3;").contains("exception=java.lang.IllegalStateException")
                .endsWith("message=always fails, attempt 3");
        assertThat(TestKafka.await(WITHIN, () -> events.stream().anyMatch(e -> e.outcome() == RecordOutcome.DEAD_LETTERED)))
                .isTrue();
        assertThat(events).extracting(RecordEvent::outcome)
                .containsExactly(RecordOutcome.RETRIED, RecordOutcome.RETRIED, RecordOutcome.DEAD_LETTERED);
    }

    @Test
    void aPermanentFailureIsDeadLetteredAtOnceAndLaterRecordsGoOn() throws Exception {
        String topic = TestKafka.uniqueTopic("permanent");
        List<String> handled = new CopyOnWriteArrayList<>();
        KafkaRetryConsumer consumer = start(KafkaRetryConsumer.builder(topic, config, m -> {
            String v = new String(m.value(), StandardCharsets.UTF_8);
            if (v.equals("bad")) {
                throw new IllegalArgumentException("not a valid order");
            }
            handled.add(v);
        }).policy(policy(5)));
        send(topic, "k", "bad");
        send(topic, "k", "good");
        assertThat(TestKafka.await(WITHIN, () -> handled.contains("good"))).isTrue();
        List<ConsumerRecord<byte[], byte[]>> dead = TestKafka.readAll(config, consumer.deadLetterTopic(), 1, WITHIN);
        assertThat(dead).hasSize(1);
        assertThat(TestKafka.header(dead.get(0), KafkaHeaders.END_REASON)).isEqualTo("NOT_RETRYABLE");
        assertThat(TestKafka.header(dead.get(0), KafkaHeaders.ATTEMPT)).isEqualTo("1");
    }
}
