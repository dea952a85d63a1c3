package dev.stagger.kafka;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.Test;

/** A broker node of the test's own stops while retries wait and while copies are produced, and starts again. */
class BrokerRestartTest {
    @Test
    void retriesWaitingWhileTheBrokerRestartsAllArriveAndNoneIsLost() throws Exception {
        TestKafka.config(); // the same skip-or-fail rule as every broker test
        try (DedicatedKafka node = DedicatedKafka.create()) {
            node.start();
            Map<String, Object> config = node.config();
            String topic = TestKafka.uniqueTopic("restart");
            Set<String> firstAttempts = ConcurrentHashMap.newKeySet();
            Set<String> done = ConcurrentHashMap.newKeySet();
            try (KafkaRetryConsumer consumer = KafkaRetryConsumer.builder(topic, config, m -> {
                        String v = new String(m.value(), StandardCharsets.UTF_8);
                        if (m.attempt() == 1) {
                            firstAttempts.add(v);
                            throw new KafkaRetryConsumerTest.Later(Duration.ofMillis(2_000));
                        }
                        done.add(v);
                    }).delayLevels(BrokerTest.LEVELS).policy(KafkaRetryConsumerTest.policy(3))
                    .sendTimeout(Duration.ofSeconds(5)).shutdownTimeout(Duration.ofSeconds(5)).build().start();
                 KafkaProducer<byte[], byte[]> producer = TestKafka.producer(config)) {
                for (int i = 0; i < 10; i++) {
                    TestKafka.send(producer, new ProducerRecord<>(topic, ("k" + i).getBytes(StandardCharsets.UTF_8),
                            ("r" + i).getBytes(StandardCharsets.UTF_8)));
                }
                assertThat(TestKafka.await(BrokerTest.WITHIN, () -> firstAttempts.size() == 10)).isTrue();
                node.stop(); // the retries wait in the 3 s delay topic
                node.start();
                assertThat(TestKafka.await(Duration.ofSeconds(60), () -> done.size() == 10))
                        .as("second attempts after the restart: %s", done).isTrue();
            }
        }
    }
}
