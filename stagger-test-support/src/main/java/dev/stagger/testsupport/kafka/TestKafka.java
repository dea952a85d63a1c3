package dev.stagger.testsupport.kafka;

import dev.stagger.testsupport.Await;
import dev.stagger.testsupport.Services;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * The Kafka broker for tests: {@code STAGGER_KAFKA_BOOTSTRAP} (default 127.0.0.1:9092), started
 * with {@code stagger-kafka/kafka-broker.sh start}. Where it is unreachable a test is skipped with
 * a message saying how to start it, except under {@code CI=true}, where it fails instead. Topic
 * names are unique to the run.
 *
 * <p>Not final: stagger-kafka's tests reach it under their package's name ({@code TestKafka}, a
 * subclass that adds nothing), as the static methods are inherited.
 */
public class TestKafka {
    /** For a subclass that only gives these static methods a package's name. */
    protected TestKafka() {
    }

    /** The test broker's address ({@code STAGGER_KAFKA_BOOTSTRAP}, default 127.0.0.1:9092), unchecked. */
    public static String bootstrap() {
        String v = System.getenv("STAGGER_KAFKA_BOOTSTRAP");
        return v == null || v.isBlank() ? "127.0.0.1:9092" : v;
    }

    /** The test broker's address after checking it answers; else the test is skipped (failed under CI). */
    public static String reachableBootstrap() {
        String address = bootstrap();
        try (Admin admin = admin(address)) {
            admin.describeCluster().clusterId().get(5, TimeUnit.SECONDS);
        } catch (Exception e) {
            throw Services.unavailable("Kafka", "Kafka is not reachable at " + address + " (" + e.getClass().getSimpleName()
                    + "); start it with stagger-kafka/kafka-broker.sh start, or set STAGGER_KAFKA_BOOTSTRAP");
        }
        return address;
    }

    /** Client settings for the test broker, after checking it answers; else the test is skipped (failed under CI). */
    public static Map<String, Object> config() {
        return Map.of("bootstrap.servers", reachableBootstrap());
    }

    /** An admin client of {@code bootstrap} that gives up on a request after 5 s. */
    public static Admin admin(String bootstrap) {
        return Admin.create(Map.of("bootstrap.servers", bootstrap, "request.timeout.ms", 5_000,
                "default.api.timeout.ms", 10_000));
    }

    /** A topic name of [a-z0-9-] unique to the run (a name that is also a plain property key). */
    public static String uniqueTopic(String what) {
        return "stagger-test-" + what + "-" + ProcessHandle.current().pid() + "-" + Long.toHexString(System.nanoTime());
    }

    public static void createTopic(Map<String, Object> config, String topic, int partitions) throws Exception {
        try (Admin admin = Admin.create(config)) {
            admin.createTopics(List.of(new NewTopic(topic, Optional.of(partitions), Optional.empty()))).all()
                    .get(30, TimeUnit.SECONDS);
        }
    }

    public static KafkaProducer<byte[], byte[]> producer(Map<String, Object> config) {
        return new KafkaProducer<>(config, new ByteArraySerializer(), new ByteArraySerializer());
    }

    public static void send(KafkaProducer<byte[], byte[]> producer, ProducerRecord<byte[], byte[]> record) throws Exception {
        producer.send(record).get(30, TimeUnit.SECONDS);
    }

    /** Every record in {@code topic} now, read from the start by a consumer of no group. */
    public static List<ConsumerRecord<byte[], byte[]>> readAll(Map<String, Object> config, String topic, int atLeast,
                                                         Duration within) {
        List<ConsumerRecord<byte[], byte[]>> out = new ArrayList<>();
        try (KafkaConsumer<byte[], byte[]> c = new KafkaConsumer<>(config, new ByteArrayDeserializer(),
                new ByteArrayDeserializer())) {
            List<TopicPartition> parts = c.partitionsFor(topic).stream()
                    .map(p -> new TopicPartition(topic, p.partition())).toList();
            c.assign(parts);
            c.seekToBeginning(parts);
            long end = System.nanoTime() + within.toNanos();
            while (out.size() < atLeast && System.nanoTime() < end) {
                c.poll(Duration.ofMillis(100)).forEach(out::add);
            }
        }
        return out;
    }

    /** Records produced to {@code topics} so far: the sum of their partitions' end offsets. */
    public static long endOffsets(Map<String, Object> config, Collection<String> topics) {
        try (KafkaConsumer<byte[], byte[]> c = new KafkaConsumer<>(config, new ByteArrayDeserializer(),
                new ByteArrayDeserializer())) {
            List<TopicPartition> parts = new ArrayList<>();
            for (String t : topics) {
                c.partitionsFor(t).forEach(i -> parts.add(new TopicPartition(t, i.partition())));
            }
            return c.endOffsets(parts, Duration.ofSeconds(30)).values().stream().mapToLong(Long::longValue).sum();
        }
    }

    public static String header(ConsumerRecord<byte[], byte[]> r, String name) {
        Header h = r.headers().lastHeader(name);
        return h == null ? null : new String(h.value(), java.nio.charset.StandardCharsets.UTF_8);
    }

    /**
     * {@link Await#within(Duration, Await.Condition)}, under the name stagger-kafka's tests call (the
     * declared {@code InterruptedException} is theirs: their callers handle it).
     */
    public static boolean await(Duration within, Supplier<Boolean> condition) throws InterruptedException {
        return Await.within(within, condition::get);
    }

    /**
     * {@link #await}, a {@link org.apache.kafka.common.KafkaException} from {@code condition} counting
     * as not yet: for a condition read through a topic just created by another client, which a new
     * client's metadata may not show yet on a loaded broker ("does not exist").
     */
    public static boolean awaitThroughNewTopic(Duration within, Supplier<Boolean> condition) throws InterruptedException {
        return Await.within(within, () -> {
            try {
                return condition.get();
            } catch (org.apache.kafka.common.KafkaException notYet) {
                return false;
            }
        });
    }
}
