package dev.stagger.kafka;

import dev.stagger.kafka.internal.RecordHeaderCodec;
import java.time.Instant;
import java.util.List;
import java.util.Objects;
import org.apache.kafka.common.header.Headers;
import org.jspecify.annotations.Nullable;

/**
 * One record as a {@link KafkaHandler} sees it. A plain value (equal when every part is, the key
 * and value arrays by identity): handler tests can make their own. A class rather than a record
 * only so that a first delivery's {@link #id()}, and a retry's {@link #history()}, are formed
 * when asked for, not for every record handled.
 */
public final class KafkaMessage {
    private final String topic;
    private final int partition;
    private final long offset;
    private final byte @Nullable [] key;
    private final byte @Nullable [] value;
    private final Headers headers;
    /** Null until asked for, on a first delivery. */
    private @Nullable String id;
    private final int attempt;
    private final Instant firstAttemptAt;
    /** Null until asked for, on a retry whose history is read from its headers. */
    private @Nullable List<AttemptError> history;

    /**
     * @param topic the work topic (also for a retry consumed from a delay topic)
     * @param partition the partition it was consumed from (of the delay topic, for a retry)
     * @param offset its offset there
     * @param key the key, or null
     * @param value the payload, or null (not copied: do not modify)
     * @param headers the headers as produced, the {@link KafkaHeaders} included
     * @param id where the record was first consumed ({@link KafkaHeaders#ORIGIN}): the same for every
     *     attempt of one record, the key for an inbox
     * @param attempt the attempt this delivery is, 1 for the first
     * @param firstAttemptAt when the first attempt ran (now, on the first)
     * @param history the failures of the earlier attempts, oldest first
     */
    public KafkaMessage(String topic, int partition, long offset, byte @Nullable [] key, byte @Nullable [] value,
                        Headers headers, String id, int attempt, Instant firstAttemptAt, List<AttemptError> history) {
        this(topic, partition, offset, key, value, headers, attempt, firstAttemptAt, List.copyOf(history));
        this.id = Objects.requireNonNull(id, "id must not be null");
    }

    /** Without its id: a first delivery's is formed from its coordinates when asked for. */
    private KafkaMessage(String topic, int partition, long offset, byte @Nullable [] key, byte @Nullable [] value,
                         Headers headers, int attempt, Instant firstAttemptAt, @Nullable List<AttemptError> history) {
        this.topic = Objects.requireNonNull(topic, "topic must not be null");
        this.headers = Objects.requireNonNull(headers, "headers must not be null");
        this.firstAttemptAt = Objects.requireNonNull(firstAttemptAt, "firstAttemptAt must not be null");
        if (attempt < 1) {
            throw new IllegalArgumentException("attempt must be at least 1, got " + attempt);
        }
        this.partition = partition;
        this.offset = offset;
        this.key = key;
        this.value = value;
        this.attempt = attempt;
        this.history = history;
    }

    /**
     * The first delivery of a record consumed from {@code topic}'s {@code partition} at {@code offset}:
     * attempt 1, no history, and {@link #id()} these coordinates, {@code topic/partition/offset}.
     *
     * @param at when this first attempt runs
     */
    public static KafkaMessage firstDelivery(String topic, int partition, long offset, byte @Nullable [] key,
                                             byte @Nullable [] value, Headers headers, Instant at) {
        return new KafkaMessage(topic, partition, offset, key, value, headers, 1, at, List.of());
    }

    /**
     * A retry's delivery (its {@link KafkaHeaders} on {@code headers}): as the full constructor, with
     * {@link #history()} read from {@code headers}' {@link KafkaHeaders#ERRORS} when first asked for
     * (most handlers never ask). A handler that changes those headers first reads what it left.
     */
    public static KafkaMessage retry(String topic, int partition, long offset, byte @Nullable [] key,
                                     byte @Nullable [] value, Headers headers, String id, int attempt, Instant firstAttemptAt) {
        KafkaMessage m = new KafkaMessage(topic, partition, offset, key, value, headers, attempt, firstAttemptAt, null);
        m.id = Objects.requireNonNull(id, "id must not be null");
        return m;
    }

    /** The work topic (also for a retry consumed from a delay topic). */
    public String topic() {
        return topic;
    }

    /** The partition it was consumed from (of the delay topic, for a retry). */
    public int partition() {
        return partition;
    }

    /** Its offset there. */
    public long offset() {
        return offset;
    }

    /** The key, or null. */
    public byte @Nullable [] key() {
        return key;
    }

    /** The payload, or null (not copied: do not modify). */
    public byte @Nullable [] value() {
        return value;
    }

    /** The headers as produced, the {@link KafkaHeaders} included. */
    public Headers headers() {
        return headers;
    }

    /**
     * Where the record was first consumed ({@link KafkaHeaders#ORIGIN}, {@code topic/partition/offset}):
     * the same for every attempt of one record, the key for an inbox.
     */
    public String id() {
        String i = id;
        if (i == null) {
            i = topic + "/" + partition + "/" + offset; // a first delivery: its own coordinates (a benign race)
            id = i;
        }
        return i;
    }

    /** The attempt this delivery is, 1 for the first. */
    public int attempt() {
        return attempt;
    }

    /** When the first attempt ran (now, on the first). */
    public Instant firstAttemptAt() {
        return firstAttemptAt;
    }

    /** The failures of the earlier attempts, oldest first. */
    public List<AttemptError> history() {
        List<AttemptError> h = history;
        if (h == null) {
            h = List.copyOf(RecordHeaderCodec.history(headers)); // a retry's: read when first asked for (a benign race)
            history = h;
        }
        return h;
    }

    @Override
    public boolean equals(@Nullable Object o) {
        return o instanceof KafkaMessage m && partition == m.partition && offset == m.offset && attempt == m.attempt
                && topic.equals(m.topic) && key == m.key && value == m.value && headers.equals(m.headers)
                && id().equals(m.id()) && firstAttemptAt.equals(m.firstAttemptAt) && history().equals(m.history());
    }

    @Override
    public int hashCode() {
        return Objects.hash(topic, partition, offset, System.identityHashCode(key), System.identityHashCode(value), headers,
                id(), attempt, firstAttemptAt, history());
    }

    @Override
    public String toString() {
        return "KafkaMessage[topic=" + topic + ", id=" + id() + ", attempt=" + attempt + ", "
                + (value == null ? "null" : value.length + " bytes") + "]";
    }
}
