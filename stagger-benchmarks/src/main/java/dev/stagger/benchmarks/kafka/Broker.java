package dev.stagger.benchmarks.kafka;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * The local broker of the Kafka harnesses: topics unique to a run, filled with a backlog, and
 * deleted (with everything a consumer created around them) afterwards. A record's value is 64
 * bytes: its index in bytes 0-3, the {@link System#nanoTime()} it was sent at in bytes 4-11.
 */
final class Broker {
    private final String bootstrap;

    Broker(String bootstrap) {
        this.bootstrap = bootstrap;
    }

    String bootstrap() {
        return bootstrap;
    }

    /** The client configuration every consumer of a harness gets: the broker and {@link #FETCH}. */
    Map<String, Object> config() {
        Map<String, Object> c = new java.util.HashMap<>(FETCH);
        c.put("bootstrap.servers", bootstrap);
        return Map.copyOf(c);
    }

    /**
     * The same fetch and poll settings for every consumer (the kafka-clients 4 defaults, written
     * out so that no framework's own defaults differ).
     */
    static final Map<String, Object> FETCH = Map.of("max.poll.records", 500, "fetch.min.bytes", 1,
            "fetch.max.wait.ms", 500, "max.partition.fetch.bytes", 1_048_576, "fetch.max.bytes", 52_428_800);

    static String uniqueTopic(String what) {
        return "stagger-bench-" + what + "-" + ProcessHandle.current().pid() + "-" + Long.toHexString(System.nanoTime());
    }

    void create(String topic, int partitions) throws Exception {
        try (Admin admin = Admin.create(config())) {
            admin.createTopics(List.of(new NewTopic(topic, Optional.of(partitions), Optional.empty()))).all()
                    .get(120, TimeUnit.SECONDS);
            // described, with a leader for every partition, before it is used: a loaded broker's metadata
            // may lag its creation, and an idempotent producer's first batch refused by a partition whose
            // leader is not ready yet can land after its later ones (then refused as out of order until the
            // fill times out)
            for (int i = 0; i < 600 && !ready(admin, topic, partitions); i++) {
                Thread.sleep(100);
            }
        }
    }

    /** Whether {@code topic} is described with {@code partitions} partitions, each with a leader. */
    private static boolean ready(Admin admin, String topic, int partitions) throws Exception {
        TopicDescription d;
        try {
            d = admin.describeTopics(List.of(topic)).allTopicNames().get(120, TimeUnit.SECONDS).get(topic);
        } catch (ExecutionException e) {
            if (e.getCause() instanceof UnknownTopicOrPartitionException) {
                return false; // not in the broker's metadata yet
            }
            throw e;
        }
        return d != null && d.partitions().size() == partitions
                && d.partitions().stream().allMatch(p -> p.leader() != null && !p.leader().isEmpty());
    }

    /** Deletes {@code topic} and every topic whose name starts with it (delay, retry and dead-letter topics). */
    void deleteAround(String topic) throws Exception {
        try (Admin admin = Admin.create(config())) {
            List<String> names = admin.listTopics().names().get(60, TimeUnit.SECONDS).stream()
                    .filter(n -> n.startsWith(topic)).toList();
            admin.deleteTopics(names).all().get(60, TimeUnit.SECONDS);
        }
    }

    KafkaProducer<byte[], byte[]> producer() {
        return new KafkaProducer<>(Map.of("bootstrap.servers", bootstrap, "linger.ms", 5, "batch.size", 262_144),
                new ByteArraySerializer(), new ByteArraySerializer());
    }

    /** Fills {@code topic} with {@code records} records keyed by their index, and waits for every acknowledgement. */
    void fill(String topic, int records) throws Exception {
        try (KafkaProducer<byte[], byte[]> producer = producer()) {
            List<Future<?>> sent = new ArrayList<>();
            for (int i = 0; i < records; i++) {
                sent.add(producer.send(new ProducerRecord<>(topic, Integer.toString(i).getBytes(), value(i))));
                if (sent.size() == 10_000) {
                    waitFor(sent);
                }
            }
            waitFor(sent);
        }
    }

    private static void waitFor(List<Future<?>> sent) throws Exception {
        for (Future<?> f : sent) {
            f.get(120, TimeUnit.SECONDS);
        }
        sent.clear();
    }

    static byte[] value(int index) {
        return ByteBuffer.allocate(64).putInt(index).putLong(System.nanoTime()).array();
    }

    static int index(byte[] value) {
        return ByteBuffer.wrap(value).getInt(0);
    }

    static long sentAt(byte[] value) {
        return ByteBuffer.wrap(value).getLong(4);
    }

    static double median(List<Double> values) {
        double[] v = values.stream().mapToDouble(Double::doubleValue).toArray();
        Arrays.sort(v);
        return v.length % 2 == 1 ? v[v.length / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2;
    }
}
