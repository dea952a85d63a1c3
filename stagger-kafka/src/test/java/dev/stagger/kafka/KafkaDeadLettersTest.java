package dev.stagger.kafka;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.Test;

class KafkaDeadLettersTest extends BrokerTest {
    @Test
    void listsRedrivesEachAtMostOncePerCallAndPurges() throws Exception {
        String topic = TestKafka.uniqueTopic("dead-letters");
        AtomicBoolean healthy = new AtomicBoolean();
        Set<String> succeeded = ConcurrentHashMap.newKeySet();
        start(KafkaRetryConsumer.builder(topic, config, m -> {
            String v = new String(m.value(), StandardCharsets.UTF_8);
            if (!healthy.get() || v.equals("poison")) {
                throw new IllegalArgumentException("rejected " + v); // permanent: dead-lettered at once
            }
            succeeded.add(v);
        }).policy(KafkaRetryConsumerTest.policy(3)));
        for (String v : List.of("a", "b", "poison")) {
            TestKafka.send(producer, new ProducerRecord<>(topic, v.getBytes(StandardCharsets.UTF_8), v.getBytes(StandardCharsets.UTF_8)));
        }
        KafkaDeadLetters dead = KafkaDeadLetters.of(config, topic);
        assertThat(TestKafka.awaitThroughNewTopic(WITHIN, () -> dead.count() == 3)).isTrue();

        List<KafkaDeadLetter> listed = dead.list(10);
        assertThat(listed).hasSize(3);
        assertThat(listed).allSatisfy(d -> {
            assertThat(d.endReason()).contains("NOT_RETRYABLE");
            assertThat(d.attempts()).isEqualTo(1);
            assertThat(d.history()).hasSize(1);
            assertThat(d.redrives()).isZero();
        });
        assertThat(dead.count()).as("listing leaves them in place").isEqualTo(3);

        healthy.set(true);
        // the poison record fails again and comes back while the call runs: it is not moved twice
        assertThat(dead.redrive(10)).isEqualTo(3);
        assertThat(TestKafka.await(WITHIN, () -> succeeded.containsAll(List.of("a", "b")))).isTrue();
        assertThat(TestKafka.await(WITHIN, () -> dead.count() == 1)).isTrue();
        KafkaDeadLetter again = dead.list(10).get(0);
        assertThat(again.redrives()).isEqualTo(1);
        assertThat(again.history()).as("the history is kept across the re-drive").hasSize(2);

        assertThat(dead.purge()).isEqualTo(1);
        assertThat(dead.count()).isZero();
        assertThat(dead.list(10)).isEmpty();
    }

    @Test
    void aLimitOutOfRangeIsRefusedNamingIt() {
        KafkaDeadLetters dead = KafkaDeadLetters.of(java.util.Map.of("bootstrap.servers", "127.0.0.1:1"), "t");
        assertThatThrownBy(() -> dead.list(0)).hasMessage("limit must be 1 to 100000, got 0");
        assertThatThrownBy(() -> KafkaDeadLetters.of(java.util.Map.of(), "t"))
                .hasMessageStartingWith("config must set bootstrap.servers");
    }
}
