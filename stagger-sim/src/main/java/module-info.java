/** A seeded discrete-event simulation of retrying clients against an overloaded server. */
module dev.stagger.sim {
    requires transitive dev.stagger.core;
    requires static org.jspecify; // the nullness annotations: compile time only, and not required of readers

    exports dev.stagger.sim;
}
