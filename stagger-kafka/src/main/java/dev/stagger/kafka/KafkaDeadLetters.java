package dev.stagger.kafka;

import dev.stagger.internal.Checks;
import dev.stagger.kafka.internal.Offsets;
import dev.stagger.kafka.internal.RecordHeaderCodec;
import dev.stagger.kafka.internal.TopicSet;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.RecordsToDelete;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * Operates the dead-letter topic of one work topic ({@code <topic>.stagger.dlt}): list the dead
 * letters with their history, send them back to the work topic for a fresh set of attempts, or
 * purge them. A Kafka topic keeps its records until retention removes them, so what an operator
 * has dealt with is tracked as the committed offsets of the consumer group
 * {@code <topic>.stagger.dlt-operator}: {@link #list} and {@link #count} show the records after
 * them, {@link #redrive} and {@link #purge} move them on.
 *
 * <p>Each call opens its own clients from the configuration and closes them before it returns.
 * Not meant for concurrent use on one topic by several operators.
 */
public final class KafkaDeadLetters {
    /** The most records one {@link #list} or {@link #redrive} handles. */
    public static final int MAX_BATCH = 100_000;

    private final Map<String, Object> config;
    private final String topic;
    private final String deadTopic;
    private final Duration timeout;

    private KafkaDeadLetters(Map<String, Object> config, String topic, Duration timeout) {
        this.config = config;
        this.topic = topic;
        this.deadTopic = TopicSet.deadTopic(topic);
        this.timeout = timeout;
    }

    /** The dead letters of work topic {@code topic}, through clients configured by {@code config} ({@code bootstrap.servers} at least). */
    public static KafkaDeadLetters of(Map<String, ?> config, String topic) {
        Objects.requireNonNull(config, "config must not be null");
        Objects.requireNonNull(topic, "topic must not be null");
        if (!config.containsKey("bootstrap.servers")) {
            throw new IllegalArgumentException("config must set bootstrap.servers, got keys " + config.keySet());
        }
        if (topic.isBlank()) {
            throw new IllegalArgumentException("topic must not be blank, got '" + topic + "'");
        }
        return new KafkaDeadLetters(Map.copyOf(config), topic, Duration.ofSeconds(30));
    }

    /**
     * The same dead letters with each broker request of a call waiting at most {@code timeout}
     * (default 30 s): reading offsets and partitions, producing a re-driven copy, deleting records.
     */
    public KafkaDeadLetters withTimeout(Duration timeout) {
        return new KafkaDeadLetters(config, topic, Checks.positive("timeout", timeout));
    }

    /** The work topic. */
    public String topic() {
        return topic;
    }

    /** The dead-letter topic. */
    public String deadLetterTopic() {
        return deadTopic;
    }

    /** The consumer group whose committed offsets mark what was re-driven or purged. */
    public String operatorGroup() {
        return deadTopic + "-operator";
    }

    /** Dead letters not yet re-driven or purged. */
    public long count() {
        try (KafkaConsumer<byte[], byte[]> c = consumer()) {
            long n = 0;
            for (Range r : ranges(c).values()) {
                n += r.end - r.start;
            }
            return n;
        }
    }

    /** Up to {@code limit} dead letters not yet re-driven or purged, in offset order per partition; left in place. */
    public List<KafkaDeadLetter> list(int limit) {
        checkLimit(limit);
        List<KafkaDeadLetter> out = new ArrayList<>();
        try (KafkaConsumer<byte[], byte[]> c = consumer()) {
            read(c, limit, r -> out.add(describe(r)));
        }
        return out;
    }

    /**
     * Sends up to {@code limit} dead letters back to the work topic as new records (same key,
     * value and application headers): the attempt count, first-attempt time, backoff state and end
     * reason are cleared (the policy starts over), the history and origin are kept and
     * {@link KafkaHeaders#REDRIVES} counts the re-drives. Each is marked done (the operator group's
     * offset moves past it) only after the broker acknowledged its copy, so an interruption leaves
     * at most a duplicate.
     *
     * <p>Each record moves at most once per call, even while a consumer runs and a re-driven record
     * fails again and comes back before the call ends: the call reads only up to the ends the
     * partitions had when it began. A dead letter without payload (an {@code UNPUBLISHABLE} one
     * that says where its record is) cannot be re-driven: its partition's re-drive stops before it;
     * {@link #purge} removes it.
     *
     * @return the number of records re-driven
     */
    public int redrive(int limit) {
        checkLimit(limit);
        Map<String, Object> p = new HashMap<>(config);
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
        int[] moved = {0};
        try (KafkaConsumer<byte[], byte[]> c = consumer();
             KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(p, new ByteArraySerializer(), new ByteArraySerializer())) {
            List<TopicPartition> stopped = new ArrayList<>();
            read(c, limit, r -> {
                TopicPartition tp = new TopicPartition(r.topic(), r.partition());
                if (stopped.contains(tp)) {
                    return;
                }
                if (r.value() == null) {
                    stopped.add(tp);
                    return;
                }
                Headers headers = RecordHeaderCodec.applicationHeaders(r.headers());
                RecordHeaderCodec.copyHistory(r.headers(), headers);
                String origin = RecordHeaderCodec.text(r.headers(), KafkaHeaders.ORIGIN);
                if (origin != null) {
                    RecordHeaderCodec.put(headers, KafkaHeaders.ORIGIN, origin);
                }
                long redrives = Math.max(0, RecordHeaderCodec.number(r.headers(), KafkaHeaders.REDRIVES, 0));
                RecordHeaderCodec.put(headers, KafkaHeaders.REDRIVES, redrives + 1);
                try {
                    producer.send(new ProducerRecord<>(topic, null, r.key(), r.value(), headers))
                            .get(timeout.toMillis(), TimeUnit.MILLISECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new KafkaException("interrupted re-driving " + deadTopic + " after " + moved[0], e);
                } catch (ExecutionException | TimeoutException e) {
                    throw new KafkaException("could not re-drive to " + topic + " after " + moved[0] + ": " + e.getMessage(), e);
                }
                c.commitSync(Map.of(tp, new OffsetAndMetadata(r.offset() + 1)), timeout);
                moved[0]++;
            });
        }
        return moved[0];
    }

    /**
     * Deletes every dead letter in the topic now (the records before the partitions' current ends)
     * and marks them done for the operator group.
     *
     * @return the number of dead letters that were not yet re-driven or purged
     */
    public long purge() {
        try (KafkaConsumer<byte[], byte[]> c = consumer(); Admin admin = Admin.create(adminConfig())) {
            Map<TopicPartition, Range> ranges = ranges(c);
            Map<TopicPartition, RecordsToDelete> delete = new HashMap<>();
            Map<TopicPartition, OffsetAndMetadata> done = new HashMap<>();
            long n = 0;
            for (var e : ranges.entrySet()) {
                delete.put(e.getKey(), RecordsToDelete.beforeOffset(e.getValue().end));
                done.put(e.getKey(), new OffsetAndMetadata(e.getValue().end));
                n += e.getValue().end - e.getValue().start;
            }
            try {
                admin.deleteRecords(delete).all().get(timeout.toMillis(), TimeUnit.MILLISECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new KafkaException("interrupted purging " + deadTopic, e);
            } catch (ExecutionException | TimeoutException e) {
                throw new KafkaException("could not purge " + deadTopic + ": " + e.getMessage(), e);
            }
            c.commitSync(done, timeout);
            return n;
        }
    }

    /** The records of one partition not yet dealt with: from the operator's offset to the end when the call began. */
    private record Range(long start, long end) {
    }

    private Map<TopicPartition, Range> ranges(KafkaConsumer<byte[], byte[]> c) {
        List<TopicPartition> parts = c.partitionsFor(deadTopic, timeout).stream()
                .map(p -> new TopicPartition(deadTopic, p.partition())).toList();
        if (parts.isEmpty()) {
            throw new KafkaException("topic " + deadTopic + " does not exist");
        }
        Map<TopicPartition, Long> begin = c.beginningOffsets(parts, timeout);
        Map<TopicPartition, Long> end = c.endOffsets(parts, timeout);
        Map<TopicPartition, OffsetAndMetadata> committed = c.committed(new java.util.HashSet<>(parts), timeout);
        Map<TopicPartition, Range> out = new HashMap<>();
        for (TopicPartition tp : parts) {
            OffsetAndMetadata at = committed.get(tp);
            long start = Math.max(Offsets.of(begin, tp), at == null ? 0 : at.offset());
            out.put(tp, new Range(start, Math.max(start, Offsets.of(end, tp))));
        }
        return out;
    }

    /** Hands up to {@code limit} records of the ranges to {@code each}, partition by partition. */
    private void read(KafkaConsumer<byte[], byte[]> c, int limit, Consumer<ConsumerRecord<byte[], byte[]>> each) {
        Map<TopicPartition, Range> ranges = ranges(c);
        int seen = 0;
        for (var e : ranges.entrySet()) {
            TopicPartition tp = e.getKey();
            Range range = e.getValue();
            if (range.start >= range.end) {
                continue;
            }
            c.assign(List.of(tp));
            c.seek(tp, range.start);
            long position = range.start;
            long deadline = System.nanoTime() + timeout.toNanos();
            while (position < range.end && seen < limit) {
                if (System.nanoTime() > deadline) {
                    throw new KafkaException("timed out reading " + tp + " at offset " + position);
                }
                for (ConsumerRecord<byte[], byte[]> r : c.poll(Duration.ofMillis(200)).records(tp)) {
                    if (r.offset() >= range.end || seen >= limit) {
                        break;
                    }
                    each.accept(r);
                    seen++;
                    position = r.offset() + 1;
                }
                position = Math.max(position, c.position(tp, timeout));
            }
        }
    }

    static KafkaDeadLetter describe(ConsumerRecord<byte[], byte[]> r) {
        Headers h = r.headers();
        long deadAt = RecordHeaderCodec.number(h, KafkaHeaders.DEAD_AT, -1);
        return new KafkaDeadLetter(r.partition(), r.offset(), Optional.ofNullable(RecordHeaderCodec.text(h, KafkaHeaders.ORIGIN)),
                RecordHeaderCodec.attempt(h), Optional.ofNullable(RecordHeaderCodec.text(h, KafkaHeaders.END_REASON)),
                deadAt < 0 ? Optional.empty() : Optional.of(Instant.ofEpochMilli(deadAt)),
                (int) Math.min(Integer.MAX_VALUE, Math.max(0, RecordHeaderCodec.number(h, KafkaHeaders.REDRIVES, 0))),
                RecordHeaderCodec.history(h), r.value() == null ? -1 : r.value().length,
                Optional.ofNullable(RecordHeaderCodec.text(h, KafkaHeaders.DEAD_CAUSE)),
                (int) Math.min(Integer.MAX_VALUE, Math.max(0, RecordHeaderCodec.number(h, KafkaHeaders.ERRORS_DROPPED, 0))));
    }

    private static void checkLimit(int limit) {
        if (limit < 1 || limit > MAX_BATCH) {
            throw new IllegalArgumentException("limit must be 1 to " + MAX_BATCH + ", got " + limit);
        }
    }

    private KafkaConsumer<byte[], byte[]> consumer() {
        Map<String, Object> c = new HashMap<>(config);
        c.put(ConsumerConfig.GROUP_ID_CONFIG, operatorGroup());
        c.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        c.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        return new KafkaConsumer<>(c, new ByteArrayDeserializer(), new ByteArrayDeserializer());
    }

    private Map<String, Object> adminConfig() {
        return new HashMap<>(config);
    }
}
