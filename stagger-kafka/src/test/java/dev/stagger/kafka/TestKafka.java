package dev.stagger.kafka;

/**
 * The Kafka broker for tests: stagger-test-support's {@link dev.stagger.testsupport.kafka.TestKafka}
 * (the broker's address, topics unique to the run, producing, reading back), whose static methods
 * this package's tests call under this name.
 */
final class TestKafka extends dev.stagger.testsupport.kafka.TestKafka {
    private TestKafka() {
    }
}
