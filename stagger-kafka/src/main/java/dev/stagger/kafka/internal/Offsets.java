package dev.stagger.kafka.internal;

import java.util.Map;
import org.apache.kafka.common.TopicPartition;

/** Offsets a Kafka call answered for the partitions it was asked about. */
public final class Offsets {
    private Offsets() {
    }

    /** The offset of {@code tp} in {@code offsets}, made by a call that was asked for {@code tp}. */
    public static long of(Map<TopicPartition, Long> offsets, TopicPartition tp) {
        Long offset = offsets.get(tp);
        if (offset == null) {
            throw new IllegalStateException("the broker answered no offset for partition " + tp);
        }
        return offset;
    }
}
