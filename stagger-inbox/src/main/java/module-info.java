/** The inbox: a processed-messages table that makes an at-least-once delivery take effect once. */
module dev.stagger.inbox {
    requires transitive dev.stagger.core;
    requires transitive dev.stagger.jdbc;
    requires static org.jspecify; // the nullness annotations: compile time only, and not required of readers

    exports dev.stagger.inbox;
}
