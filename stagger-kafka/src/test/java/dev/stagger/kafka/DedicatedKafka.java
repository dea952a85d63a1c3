package dev.stagger.kafka;

import java.io.IOException;

/**
 * A Kafka broker node of a test's own, for tests that stop and restart it: stagger-test-support's
 * {@link dev.stagger.testsupport.kafka.DedicatedKafka}, under this package's name.
 */
final class DedicatedKafka extends dev.stagger.testsupport.kafka.DedicatedKafka {
    private DedicatedKafka() throws IOException {
    }

    /** A node on free ports, not started yet. */
    public static DedicatedKafka create() throws IOException {
        return new DedicatedKafka();
    }
}
