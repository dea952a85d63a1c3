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

    /**
     * Three consumers: a second and a third join while retries wait in paused delay partitions,
     * each takes part (handles first attempts), then the third and the second leave in turn.
     * Every record sent reaches its second attempt (0 lost) and no partition stays paused.
     */
    @Test
    void aSecondAndAThirdConsumerJoiningAndLeavingLoseNoRecord() throws Exception {
        String topic = TestKafka.uniqueTopic("rebalance3");
        int partitions = 6;
        TestKafka.createTopic(config, topic, partitions);
        Set<String> sent = ConcurrentHashMap.newKeySet();
        Map<String, Set<String>> firstBy = new ConcurrentHashMap<>();
        Set<String> secondAttempts = ConcurrentHashMap.newKeySet();
        java.util.function.Function<String, KafkaRetryConsumer.Builder> consumer = tag ->
                KafkaRetryConsumer.builder(topic, config, m -> {
                    String v = new String(m.value(), StandardCharsets.UTF_8);
                    if (m.attempt() == 1) {
                        firstBy.computeIfAbsent(tag, t -> ConcurrentHashMap.newKeySet()).add(v);
                        throw new KafkaRetryConsumerTest.Later(Duration.ofMillis(2_000)); // waits in the 3 s level, paused
                    }
                    secondAttempts.add(v);
                }).policy(KafkaRetryConsumerTest.policy(3));
        int[] next = {0};
        java.util.concurrent.Callable<Void> round = () -> { // one record to every partition
            for (int p = 0; p < partitions; p++) {
                String v = "r" + next[0]++;
                TestKafka.send(producer, new ProducerRecord<>(topic, p, null, v.getBytes(StandardCharsets.UTF_8)));
                sent.add(v);
            }
            return null;
        };
        KafkaRetryConsumer a = start(consumer.apply("a"));
        round.call();
        round.call();

        KafkaRetryConsumer b = start(consumer.apply("b"));
        KafkaRetryConsumer c = start(consumer.apply("c"));
        long deadline = System.nanoTime() + WITHIN.toNanos();
        while (firstBy.keySet().size() < 3 && System.nanoTime() < deadline) {
            round.call(); // until the group of three has settled and each consumer handles its share
            TestKafka.await(Duration.ofMillis(500), () -> firstBy.keySet().size() == 3);
        }
        assertThat(firstBy.keySet()).as("consumers that handled first attempts").containsExactlyInAnyOrder("a", "b", "c");

        c.close(); // the third leaves, with retries of its own waiting in paused partitions
        round.call();
        b.close(); // then the second
        round.call();

        assertThat(TestKafka.await(Duration.ofSeconds(40), () -> secondAttempts.containsAll(sent)))
                .as("records without their second attempt: %s", missing(sent, secondAttempts)).isTrue();
        assertThat(TestKafka.await(WITHIN, () -> a.pausedPartitions().isEmpty()))
                .as("no partition left paused, now %s", a.pausedPartitions()).isTrue();
    }

    private static Set<String> missing(Set<String> sent, Set<String> done) {
        Set<String> out = new java.util.TreeSet<>(sent);
        out.removeAll(done);
        return out;
    }
}
