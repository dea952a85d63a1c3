/** The inbox: a processed-messages table that makes an at-least-once delivery take effect once. */
module dev.stagger.inbox {
    requires transitive dev.stagger.core;
    requires transitive dev.stagger.jdbc;
    requires static transitive org.jspecify; // the nullness annotations in the API: compile time only

    exports dev.stagger.inbox;
}
