package dev.stagger.spring;

import static org.junit.jupiter.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;

/**
 * The Kafka broker of the tests of Stagger's Kafka consumers under Spring: {@code STAGGER_KAFKA_BOOTSTRAP}
 * (default 127.0.0.1:9092, started with {@code stagger-kafka/kafka-broker.sh start}). Unreachable:
 * the test is skipped with a message, or fails under {@code CI=true}.
 */
final class KafkaBroker {
    private KafkaBroker() {
    }

    static String bootstrap() {
        String v = System.getenv("STAGGER_KAFKA_BOOTSTRAP");
        String address = v == null || v.isBlank() ? "127.0.0.1:9092" : v;
        try (Admin admin = admin(address)) {
            admin.describeCluster().clusterId().get(5, TimeUnit.SECONDS);
        } catch (Exception e) {
            String message = "Kafka is not reachable at " + address + " (" + e.getClass().getSimpleName()
                    + "); start it with stagger-kafka/kafka-broker.sh start, or set STAGGER_KAFKA_BOOTSTRAP";
            if ("true".equals(System.getenv("CI"))) {
                fail("CI=true requires Kafka: " + message);
            }
            assumeTrue(false, message);
        }
        return address;
    }

    static Admin admin(String bootstrap) {
        return Admin.create(Map.of("bootstrap.servers", bootstrap, "request.timeout.ms", 5_000, "default.api.timeout.ms", 10_000));
    }

    /** A topic name of [a-z0-9-] unique to the run (a name that is also a plain property key). */
    static String uniqueTopic(String what) {
        return "stagger-spring-" + what + "-" + ProcessHandle.current().pid() + "-" + Long.toHexString(System.nanoTime());
    }

    static void createTopic(String bootstrap, String topic, int partitions) throws Exception {
        try (Admin admin = admin(bootstrap)) {
            admin.createTopics(List.of(new NewTopic(topic, Optional.of(partitions), Optional.empty()))).all()
                    .get(30, TimeUnit.SECONDS);
        }
    }

    /** Polls {@code condition} until it holds or {@code within} passes. */
    static boolean await(Duration within, BooleanSupplier condition) throws InterruptedException {
        long end = System.nanoTime() + within.toNanos();
        while (System.nanoTime() < end) {
            if (condition.getAsBoolean()) {
                return true;
            }
            Thread.sleep(20);
        }
        return condition.getAsBoolean();
    }
}
