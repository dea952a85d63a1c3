package dev.stagger.kafka;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.junit.jupiter.api.Test;

/** Records and topics that are not what the consumer expects: each ends handled or dead-lettered with a reason. */
class HostileInputTest extends BrokerTest {
    private static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    @Test
    void malformedAndHugeStaggerHeadersCountAsAbsentAndTheCopyCarriesBoundedOnes() throws Exception {
        String topic = TestKafka.uniqueTopic("hostile-headers");
        List<KafkaMessage> seen = new CopyOnWriteArrayList<>();
        start(KafkaRetryConsumer.builder(topic, config, m -> {
            seen.add(m);
            throw new IllegalStateException("fails");
        }).policy(KafkaRetryConsumerTest.policy(2)));
        RecordHeaders headers = new RecordHeaders();
        headers.add(KafkaHeaders.ATTEMPT, utf8("NaN"));
        headers.add(KafkaHeaders.FIRST_ATTEMPT_AT, utf8("yesterday"));
        headers.add(KafkaHeaders.BACKOFF_STATE, utf8("9".repeat(500)));
        headers.add(KafkaHeaders.ERRORS, utf8("not an entry"));
        headers.add(KafkaHeaders.ERRORS, new byte[200_000]);
        headers.add(KafkaHeaders.ORIGIN, utf8("o".repeat(10_000)));
        headers.add("app", utf8("kept"));
        TestKafka.send(producer, new ProducerRecord<>(topic, null, null, utf8("k"), utf8("v"), headers));

        assertThat(TestKafka.await(WITHIN, () -> seen.size() >= 2)).as("seen %s", seen).isTrue();
        KafkaMessage first = seen.get(0);
        assertThat(first.attempt()).isEqualTo(1);
        assertThat(first.history()).isEmpty();
        assertThat(first.id()).isEqualTo(topic + "/0/0");
        KafkaMessage second = seen.get(1);
        assertThat(second.attempt()).isEqualTo(2);
        assertThat(second.history()).hasSize(1);
        assertThat(new String(second.headers().lastHeader("app").value(), StandardCharsets.UTF_8)).isEqualTo("kept");
        long staggerBytes = 0;
        for (Header h : second.headers()) {
            if (h.key().startsWith("x-stagger-")) {
                staggerBytes += h.value().length;
            }
        }
        assertThat(staggerBytes).as("the copy's own headers, none of the hostile ones").isLessThan(2_000);
    }

    @Test
    void aDueTimeFarAheadIsDeadLetteredWithoutRunningTheHandler() throws Exception {
        String topic = TestKafka.uniqueTopic("hostile-due");
        List<KafkaMessage> seen = new CopyOnWriteArrayList<>();
        KafkaRetryConsumer consumer = start(KafkaRetryConsumer.builder(topic, config, seen::add)
                .policy(KafkaRetryConsumerTest.policy(3)).maxDelay(Duration.ofHours(1)));
        RecordHeaders headers = new RecordHeaders();
        headers.add(KafkaHeaders.DUE_AT, utf8(Long.toString(System.currentTimeMillis() + Duration.ofDays(30).toMillis())));
        TestKafka.send(producer, new ProducerRecord<>(topic, null, null, utf8("k"), utf8("v"), headers));
        List<ConsumerRecord<byte[], byte[]>> dead = TestKafka.readAll(config, consumer.deadLetterTopic(), 1,
                WITHIN);
        assertThat(dead).hasSize(1);
        assertThat(TestKafka.header(dead.get(0), KafkaHeaders.DEAD_CAUSE)).startsWith("DUE_AT_OUT_OF_RANGE: ");
        assertThat(seen).isEmpty();
    }

    @Test
    void aRecordTooLargeForTheProducerIsDeadLetteredWithWhereItIs() throws Exception {
        String topic = TestKafka.uniqueTopic("hostile-large");
        List<String> handled = new CopyOnWriteArrayList<>();
        Map<String, Object> small = new HashMap<>(config);
        small.put("max.request.size", 20_000);
        KafkaRetryConsumer consumer = start(KafkaRetryConsumer.builder(topic, small, m -> {
            if (m.value().length > 1_000) {
                throw new IllegalStateException("too big to handle now");
            }
            handled.add(new String(m.value(), StandardCharsets.UTF_8));
        }).policy(KafkaRetryConsumerTest.policy(3)));
        TestKafka.send(producer, new ProducerRecord<>(topic, utf8("k"), new byte[100_000]));
        TestKafka.send(producer, new ProducerRecord<>(topic, utf8("k"), utf8("after")));
        assertThat(TestKafka.await(WITHIN, () -> handled.contains("after"))).isTrue();
        List<ConsumerRecord<byte[], byte[]>> dead = TestKafka.readAll(config, consumer.deadLetterTopic(), 1,
                WITHIN);
        assertThat(dead).hasSize(1);
        assertThat(dead.get(0).value()).isNull();
        assertThat(TestKafka.header(dead.get(0), KafkaHeaders.DEAD_CAUSE)).startsWith("UNPUBLISHABLE: ")
                .contains("RecordTooLargeException").contains("stays at " + topic + "/0/0");
        assertThat(TestKafka.header(dead.get(0), KafkaHeaders.ORIGIN)).isEqualTo(topic + "/0/0");
    }

    @Test
    void aDelayTopicDeletedWhileConsumingIsCreatedAgainAndTheRetryArrives() throws Exception {
        String topic = TestKafka.uniqueTopic("hostile-deleted");
        List<KafkaMessage> seen = new CopyOnWriteArrayList<>();
        KafkaRetryConsumer consumer = start(KafkaRetryConsumer.builder(topic, config, m -> {
            seen.add(m);
            if (m.attempt() == 1) {
                throw new IllegalStateException("first attempt fails");
            }
        }).policy(KafkaRetryConsumerTest.policy(3)).sendTimeout(Duration.ofSeconds(5)));
        TestKafka.send(producer, new ProducerRecord<>(topic, utf8("k"), utf8("warm-up")));
        assertThat(TestKafka.await(WITHIN, () -> seen.size() >= 2)).isTrue();
        try (Admin admin = Admin.create(config)) {
            admin.deleteTopics(List.of(consumer.delayTopics().get(0))).all().get(30, TimeUnit.SECONDS);
        }
        TestKafka.send(producer, new ProducerRecord<>(topic, utf8("k"), utf8("after-delete")));
        assertThat(TestKafka.await(Duration.ofSeconds(60), () -> seen.stream()
                .anyMatch(m -> m.attempt() == 2 && "after-delete".equals(new String(m.value(), StandardCharsets.UTF_8)))))
                .as("the retry after the delay topic was deleted, seen %s", seen).isTrue();
    }
}
