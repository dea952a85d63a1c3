package dev.stagger.kafka;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.stagger.Backoff;
import dev.stagger.RetryPolicy;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;

/** Key order on the real broker: a key's records wait behind its retry, other keys flow past. */
class KeyOrderTest extends BrokerTest {
    private void send(String topic, String... keyValues) throws Exception {
        for (String kv : keyValues) {
            String key = kv.substring(0, 1);
            TestKafka.send(producer, new ProducerRecord<>(topic, key.getBytes(StandardCharsets.UTF_8),
                    kv.getBytes(StandardCharsets.UTF_8)));
        }
    }

    private static String value(KafkaMessage m) {
        return new String(m.value(), StandardCharsets.UTF_8);
    }

    /** A handler that fails A1's first attempt and lists what it handled. */
    private static KafkaHandler a1FailsOnce(List<String> handled) {
        return m -> {
            if (value(m).equals("A1") && m.attempt() == 1) {
                throw new IllegalStateException("A1 fails once");
            }
            handled.add(value(m));
        };
    }

    private long committed(String group, String topic) throws Exception {
        try (Admin admin = Admin.create(config)) {
            OffsetAndMetadata o = admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get()
                    .get(new TopicPartition(topic, 0));
            return o == null ? -1 : o.offset();
        }
    }

    @Test
    void aKeysLaterRecordsWaitBehindItsRetryWhileOtherKeysFlowPast() throws Exception {
        String topic = TestKafka.uniqueTopic("key-order");
        TestKafka.createTopic(config, topic, 1);
        List<String> handled = new CopyOnWriteArrayList<>();
        AtomicInteger heldWhenB4 = new AtomicInteger(-1);
        java.util.concurrent.atomic.AtomicLong committedAtRetry = new java.util.concurrent.atomic.AtomicLong(-2);
        AtomicReference<KafkaRetryConsumer> self = new AtomicReference<>();
        self.set(start(KafkaRetryConsumer.builder(topic, config, m -> {
            String v = value(m);
            if (v.equals("A1") && m.attempt() == 1) {
                throw new IllegalStateException("A1 fails once");
            }
            if (v.equals("B4")) {
                heldWhenB4.set(self.get().heldRecords());
            }
            if (v.equals("A1")) { // its retry: B1 to B4 (offsets 1, 3, 5, 6) are done, A2 (offset 2) and A3 held
                committedAtRetry.set(committed(topic, topic));
            }
            handled.add(v);
        }).policy(KafkaRetryConsumerTest.policy(3)).keyOrder(10, 100)));
        send(topic, "A1", "B1", "A2", "B2", "A3", "B3", "B4");
        assertThat(TestKafka.await(WITHIN, () -> handled.size() == 7)).as("handled %s", handled).isTrue();
        assertThat(handled).as("A's records in order, after A1's retry; B's flowed past it")
                .containsExactly("B1", "B2", "B3", "B4", "A1", "A2", "A3");
        assertThat(heldWhenB4.get()).as("A2 and A3 were held while B4 was handled").isEqualTo(2);
        assertThat(committedAtRetry.get()).as("the committed offset stops at the first held record, A2")
                .isBetween(-1L, 2L);
        assertThat(TestKafka.await(WITHIN, () -> {
            try {
                return committed(topic, topic) == 7;
            } catch (Exception e) {
                return false;
            }
        })).as("the offset passes the held records once they are handled").isTrue();
        assertThat(self.get().heldRecords()).isZero();
    }

    @Test
    void withoutKeyOrderALaterRecordOvertakesItsKeysRetry() throws Exception {
        String topic = TestKafka.uniqueTopic("no-key-order");
        TestKafka.createTopic(config, topic, 1);
        List<String> handled = new CopyOnWriteArrayList<>();
        start(KafkaRetryConsumer.builder(topic, config, a1FailsOnce(handled)).policy(KafkaRetryConsumerTest.policy(3)));
        send(topic, "A1", "B1", "A2");
        assertThat(TestKafka.await(WITHIN, () -> handled.size() == 3)).isTrue();
        assertThat(handled).containsExactly("B1", "A2", "A1");
    }

    @Test
    void aDeadLetteredRetryReleasesItsKeysHeldRecords() throws Exception {
        String topic = TestKafka.uniqueTopic("key-order-dead");
        TestKafka.createTopic(config, topic, 1);
        List<String> handled = new CopyOnWriteArrayList<>();
        KafkaRetryConsumer consumer = start(KafkaRetryConsumer.builder(topic, config, m -> {
            if (value(m).equals("A1")) {
                throw new IllegalStateException("A1 always fails, attempt " + m.attempt());
            }
            handled.add(value(m));
        }).policy(KafkaRetryConsumerTest.policy(2)).keyOrder(10, 100));
        send(topic, "A1", "A2", "B1", "A3");
        assertThat(TestKafka.await(WITHIN, () -> handled.size() == 3)).as("handled %s", handled).isTrue();
        assertThat(handled).containsExactly("B1", "A2", "A3");
        assertThat(TestKafka.readAll(config, consumer.deadLetterTopic(), 1, WITHIN)).hasSize(1);
    }

    @Test
    void pastTheBoundThePartitionWaitsInsteadOfOvertaking() throws Exception {
        String topic = TestKafka.uniqueTopic("key-order-bound");
        TestKafka.createTopic(config, topic, 1);
        List<String> handled = new CopyOnWriteArrayList<>();
        start(KafkaRetryConsumer.builder(topic, config, a1FailsOnce(handled)).policy(KafkaRetryConsumerTest.policy(3))
                .keyOrder(1, 100));
        // A2 is held; A3 is past one per key: the partition stops at it, so B2 waits for A1's retry too
        send(topic, "A1", "B1", "A2", "A3", "B2");
        assertThat(TestKafka.await(WITHIN, () -> handled.size() == 5)).as("handled %s", handled).isTrue();
        assertThat(handled).containsExactly("B1", "A1", "A2", "A3", "B2");
    }

    @Test
    void aNewOwnerHoldsAKeysRecordsBehindARetryThatWasWaitingBeforeItGotThePartition() throws Exception {
        String topic = TestKafka.uniqueTopic("key-order-handover");
        TestKafka.createTopic(config, topic, 1);
        List<String> first = new CopyOnWriteArrayList<>();
        RetryPolicy twoSeconds = RetryPolicy.builder().maxAttempts(3).backoff(Backoff.fixed(java.time.Duration.ofSeconds(2)))
                .build();
        KafkaRetryConsumer before = start(KafkaRetryConsumer.builder(topic, config, a1FailsOnce(first))
                .policy(twoSeconds).keyOrder(10, 100));
        send(topic, "A1");
        // A1 failed and its copy waits in a delay topic (3 s level): the partition changes hands now
        assertThat(TestKafka.await(WITHIN, () -> TestKafka.readAll(config, before.delayTopics().get(2), 1,
                java.time.Duration.ofMillis(200)).size() == 1)).isTrue();
        before.close();
        send(topic, "A2", "B1");
        List<String> handled = new CopyOnWriteArrayList<>();
        start(KafkaRetryConsumer.builder(topic, config, a1FailsOnce(handled)).policy(twoSeconds).keyOrder(10, 100));
        assertThat(TestKafka.await(WITHIN, () -> handled.size() == 3)).as("handled %s", handled).isTrue();
        assertThat(handled).as("A2 waited for A1's retry, read from the delay topic by the new owner")
                .containsExactly("B1", "A1", "A2");
        assertThat(first).isEmpty();
    }

    @Test
    void aKeyOrderCopyReachesTheNewPartitionWhenTheWorkTopicGainedPartitions() throws Exception {
        String topic = TestKafka.uniqueTopic("key-order-grown");
        TestKafka.createTopic(config, topic, 1);
        List<String> handled = new CopyOnWriteArrayList<>();
        KafkaRetryConsumer consumer = start(KafkaRetryConsumer.builder(topic, config, a1FailsOnce(handled))
                .policy(KafkaRetryConsumerTest.policy(3)).keyOrder(10, 100).sendTimeout(java.time.Duration.ofSeconds(2)));
        try (Admin admin = Admin.create(config)) {
            admin.createPartitions(Map.of(topic, org.apache.kafka.clients.admin.NewPartitions.increaseTo(2))).all().get();
        }
        // the delay topics still have one partition; A1's copy goes to partition 1 of its delay topic
        TestKafka.send(producer, new ProducerRecord<>(topic, 1, "A".getBytes(StandardCharsets.UTF_8),
                "A1".getBytes(StandardCharsets.UTF_8)));
        assertThat(TestKafka.await(java.time.Duration.ofSeconds(60), () -> handled.contains("A1"))).as("handled %s", handled)
                .isTrue();
        try (Admin admin = Admin.create(config)) {
            assertThat(admin.describeTopics(consumer.delayTopics()).allTopicNames().get().values())
                    .allSatisfy(d -> assertThat(d.partitions()).hasSize(2));
        }
    }

    @Test
    void theBoundsAreChecked() {
        Map<String, Object> c = Map.of("bootstrap.servers", "127.0.0.1:1");
        assertThatThrownBy(() -> KafkaRetryConsumer.builder("t", c, m -> { }).keyOrder(0, 10))
                .hasMessage("maxHeldPerKey must be 1 to 1000000, got 0");
        assertThatThrownBy(() -> KafkaRetryConsumer.builder("t", c, m -> { }).keyOrder(10, 5))
                .hasMessage("maxHeld must be maxHeldPerKey (10) to 10000000, got 5");
    }
}
