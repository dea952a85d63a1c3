/** A Kafka consumer with tiered delay topics for retries and a dead-letter topic. */
@SuppressWarnings({"requires-automatic", "requires-transitive-automatic"}) // kafka-clients has no module descriptor
module dev.stagger.kafka {
    requires transitive dev.stagger.core;
    requires transitive kafka.clients;
    requires static org.jspecify; // the nullness annotations: compile time only, and not required of readers

    exports dev.stagger.kafka;
}
