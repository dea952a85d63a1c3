/** A seeded discrete-event simulation of retrying clients against an overloaded server. */
module dev.stagger.sim {
    requires transitive dev.stagger.core;
    requires static transitive org.jspecify; // the nullness annotations in the API: compile time only

    exports dev.stagger.sim;
}
