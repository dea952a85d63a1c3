package dev.stagger.kafka;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.Test;

/** A second consumer joins the group while retries wait in paused partitions, then leaves: nothing stays paused or lost. */
class RebalanceTest extends BrokerTest {
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
                .policy(KafkaRetryConsumerTest.policy(3));
        KafkaRetryConsumer a = start(builder);
        for (int i = 0; i < 20; i++) {
            TestKafka.send(producer, new ProducerRecord<>(topic, ("k" + i).getBytes(StandardCharsets.UTF_8),
                    ("r" + i).getBytes(StandardCharsets.UTF_8)));
        }
        assertThat(TestKafka.await(WITHIN, () -> firstAttempts.size() == 20)).isTrue();

        KafkaRetryConsumer b = start(builder); // joins while the retries wait in paused delay partitions
        for (int i = 20; i < 30; i++) {
            TestKafka.send(producer, new ProducerRecord<>(topic, ("k" + i).getBytes(StandardCharsets.UTF_8),
                    ("r" + i).getBytes(StandardCharsets.UTF_8)));
        }
        assertThat(TestKafka.await(WITHIN, () -> firstAttempts.size() == 30)).isTrue();
        b.close(); // leaves: its partitions, paused or not, go back to the first consumer

        assertThat(TestKafka.await(Duration.ofSeconds(40), () -> secondAttempts.size() == 30))
                .as("second attempts after the rebalances: %s", secondAttempts).isTrue();
        assertThat(TestKafka.await(KafkaRetryConsumerTest.WITHIN, () -> a.pausedPartitions().isEmpty()))
                .as("no partition left paused, now %s", a.pausedPartitions()).isTrue();
        // records sent after it all are handled at once: no partition was left paused
        long sent = System.currentTimeMillis();
        List<Long> handledAt = new CopyOnWriteArrayList<>();
        for (int i = 30; i < 34; i++) {
            TestKafka.send(producer, new ProducerRecord<>(topic, ("k" + i).getBytes(StandardCharsets.UTF_8),
                    ("r" + i).getBytes(StandardCharsets.UTF_8)));
        }
        assertThat(TestKafka.await(WITHIN, () -> firstAttempts.size() == 34)).isTrue();
        handledAt.add(System.currentTimeMillis() - sent);
        assertThat(handledAt.get(0)).as("first attempts of new records after the rebalance").isLessThan(10_000);
    }
}
