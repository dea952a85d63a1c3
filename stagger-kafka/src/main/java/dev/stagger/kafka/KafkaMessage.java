package dev.stagger.kafka;

import java.time.Instant;
import java.util.List;
import java.util.Objects;
import org.apache.kafka.common.header.Headers;
import org.jspecify.annotations.Nullable;

/**
 * One record as a {@link KafkaHandler} sees it. A plain value: handler tests can make their own.
 *
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
public record KafkaMessage(String topic, int partition, long offset, byte @Nullable [] key, byte @Nullable [] value,
                           Headers headers, String id, int attempt, Instant firstAttemptAt, List<AttemptError> history) {
    public KafkaMessage {
        Objects.requireNonNull(topic, "topic must not be null");
        Objects.requireNonNull(headers, "headers must not be null");
        Objects.requireNonNull(id, "id must not be null");
        Objects.requireNonNull(firstAttemptAt, "firstAttemptAt must not be null");
        history = List.copyOf(history);
        if (attempt < 1) {
            throw new IllegalArgumentException("attempt must be at least 1, got " + attempt);
        }
    }

    @Override
    public String toString() {
        return "KafkaMessage[topic=" + topic + ", id=" + id + ", attempt=" + attempt + ", "
                + (value == null ? "null" : value.length + " bytes") + "]";
    }
}
