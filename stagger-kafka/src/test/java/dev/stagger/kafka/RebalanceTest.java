package dev.stagger.kafka;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** A second consumer joins the group while retries wait in paused partitions, then leaves: nothing stays paused or lost. */
class RebalanceTest {
    private Map<String, Object> config;
    private KafkaProducer<byte[], byte[]> producer;
    private final List<KafkaRetryConsumer> consumers = new CopyOnWriteArrayList<>();

    @BeforeEach
    void connect() {
        config = TestKafka.config();
        producer = TestKafka.producer(config);
    }

    @AfterEach
    void close() {
        consumers.forEach(KafkaRetryConsumer::close);
        if (producer != null) {
            producer.close();
        }
    }

    @Test
    void aConsumerJoiningAndLeavingLeavesNoPartitionPausedAndNoRetryLost() throws Exception {
        String topic = TestKafka.uniqueTopic("rebalance");
        TestKafka.createTopic(config, topic, 4);
        Set<String> firstAttempts = ConcurrentHashMap.newKeySet();
        Set<String> secondAttempts = ConcurrentHashMap.newKeySet();
        KafkaHandler handler = m -> {
            String v = new String(m.value(), StandardCharsets.UTF_8);
            if (m.attempt() == 1) {
                firstAttempts.add(v);
                throw new KafkaRetryConsumerTest.Later(Duration.ofMillis(2_000)); // waits in the 3 s level, paused
            }
            secondAttempts.add(v);
        };
        KafkaRetryConsumer.Builder builder = KafkaRetryConsumer.builder(topic, config, handler)
                .delayLevels(KafkaRetryConsumerTest.LEVELS).policy(KafkaRetryConsumerTest.policy(3))
                .shutdownTimeout(Duration.ofSeconds(5));
        KafkaRetryConsumer a = builder.build();
        consumers.add(a);
        a.start();
        for (int i = 0; i < 20; i++) {
            TestKafka.send(producer, new ProducerRecord<>(topic, ("k" + i).getBytes(StandardCharsets.UTF_8),
                    ("r" + i).getBytes(StandardCharsets.UTF_8)));
        }
        assertThat(TestKafka.await(KafkaRetryConsumerTest.WITHIN, () -> firstAttempts.size() == 20)).isTrue();

        KafkaRetryConsumer b = builder.build(); // joins while the retries wait in paused delay partitions
        consumers.add(b);
        b.start();
        for (int i = 20; i < 30; i++) {
            TestKafka.send(producer, new ProducerRecord<>(topic, ("k" + i).getBytes(StandardCharsets.UTF_8),
                    ("r" + i).getBytes(StandardCharsets.UTF_8)));
        }
        assertThat(TestKafka.await(KafkaRetryConsumerTest.WITHIN, () -> firstAttempts.size() == 30)).isTrue();
        b.close(); // leaves: its partitions, paused or not, go back to the first consumer

        assertThat(TestKafka.await(Duration.ofSeconds(40), () -> secondAttempts.size() == 30))
                .as("second attempts after the rebalances: %s", secondAttempts).isTrue();
        // records sent after it all are handled at once: no partition was left paused
        long sent = System.currentTimeMillis();
        List<Long> handledAt = new CopyOnWriteArrayList<>();
        for (int i = 30; i < 34; i++) {
            TestKafka.send(producer, new ProducerRecord<>(topic, ("k" + i).getBytes(StandardCharsets.UTF_8),
                    ("r" + i).getBytes(StandardCharsets.UTF_8)));
        }
        assertThat(TestKafka.await(KafkaRetryConsumerTest.WITHIN, () -> firstAttempts.size() == 34)).isTrue();
        handledAt.add(System.currentTimeMillis() - sent);
        assertThat(handledAt.get(0)).as("first attempts of new records after the rebalance").isLessThan(10_000);
    }
}
