package dev.stagger.kafka;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;

/** What every test on the broker holds: the client settings, a producer, and the consumers it started (closed after it). */
abstract class BrokerTest {
    static final List<Duration> LEVELS = List.of(Duration.ofMillis(200), Duration.ofSeconds(1), Duration.ofSeconds(3));
    static final Duration WITHIN = Duration.ofSeconds(20);

    Map<String, Object> config;
    KafkaProducer<byte[], byte[]> producer;
    private final List<KafkaRetryConsumer> consumers = new CopyOnWriteArrayList<>();

    @BeforeEach
    void connect() {
        config = TestKafka.config();
        producer = TestKafka.producer(config);
    }

    @AfterEach
    void closeAll() {
        consumers.forEach(KafkaRetryConsumer::close);
        if (producer != null) {
            producer.close();
        }
    }

    /** Builds with the short test levels, remembers it for closing. */
    KafkaRetryConsumer build(KafkaRetryConsumer.Builder b) {
        KafkaRetryConsumer c = b.delayLevels(LEVELS).shutdownTimeout(Duration.ofSeconds(5)).build();
        consumers.add(c);
        return c;
    }

    KafkaRetryConsumer start(KafkaRetryConsumer.Builder b) {
        return build(b).start();
    }
}
