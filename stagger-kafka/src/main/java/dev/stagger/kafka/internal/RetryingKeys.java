package dev.stagger.kafka.internal;

import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Supplier;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;

/**
 * Key order across a rebalance or a crash: which keys of a work-topic partition have a record in
 * retry, read from the broker. A key's record in retry is a copy in partition {@code n} of a delay
 * topic (key order pins copies to the partition of their record's number) at or after the delay
 * group's committed offset there: not yet settled, or settled and to be handled again. A consumer
 * given partition {@code n} of the work topic holds those keys' records from the start, as the
 * consumer before it did. Reads with a consumer of the delay group that never joins it nor
 * commits, assigned by hand, up to the ends the partitions had when it began; bounded by a timeout.
 */
public final class RetryingKeys {
    private final TopicSet topics;
    private final Supplier<Consumer<byte[], byte[]>> readers;
    private final Duration timeout;

    /**
     * @param readers a consumer for each read (closed after it), of the delay group (for its
     *     committed offsets), never subscribed, never committing
     * @param timeout how long one read may take in all
     */
    public RetryingKeys(TopicSet topics, Supplier<Consumer<byte[], byte[]>> readers, Duration timeout) {
        this.topics = topics;
        this.readers = readers;
        this.timeout = timeout;
    }

    /**
     * The keys with a copy in partition {@code partition} of a delay topic past the delay group's
     * committed offsets (from the start where none is committed).
     *
     * @throws org.apache.kafka.common.KafkaException when the broker does not answer in time
     * @throws IllegalStateException when the copies cannot be read up to their ends in time
     */
    Set<ByteBuffer> of(int partition) {
        long deadline = System.nanoTime() + timeout.toNanos();
        List<TopicPartition> delay = new ArrayList<>();
        for (String t : topics.retryTopics()) {
            delay.add(new TopicPartition(t, partition));
        }
        try (Consumer<byte[], byte[]> reader = readers.get()) {
            Map<TopicPartition, OffsetAndMetadata> committed = reader.committed(new HashSet<>(delay), timeout);
            Map<TopicPartition, Long> ends = reader.endOffsets(delay, timeout);
            Map<TopicPartition, Long> starts = reader.beginningOffsets(delay, timeout);
            Map<TopicPartition, Long> from = new HashMap<>();
            for (TopicPartition tp : delay) {
                OffsetAndMetadata c = committed.get(tp);
                long start = Math.max(starts.getOrDefault(tp, 0L), c == null ? 0 : c.offset());
                if (start < ends.getOrDefault(tp, 0L)) {
                    from.put(tp, start);
                }
            }
            return read(reader, from, ends, partition, deadline);
        }
    }

    private Set<ByteBuffer> read(Consumer<byte[], byte[]> reader, Map<TopicPartition, Long> from,
                                 Map<TopicPartition, Long> ends, int partition, long deadline) {
        Set<ByteBuffer> keys = new HashSet<>();
        if (from.isEmpty()) {
            return keys;
        }
        reader.assign(from.keySet());
        from.forEach(reader::seek);
        Set<TopicPartition> left = new HashSet<>(from.keySet());
        while (!left.isEmpty()) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("the delay topics' partition " + partition + " could not be read to its end in "
                        + timeout);
            }
            for (ConsumerRecord<byte[], byte[]> r : reader.poll(Duration.ofMillis(100))) {
                TopicPartition tp = new TopicPartition(r.topic(), r.partition());
                if (r.offset() < Offsets.of(ends, tp) && r.key() != null) {
                    keys.add(ByteBuffer.wrap(r.key()));
                }
            }
            left.removeIf(tp -> reader.position(tp) >= Offsets.of(ends, tp));
        }
        return keys;
    }
}
