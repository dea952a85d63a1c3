/** Stagger's HTTP retry rules for OpenFeign clients: a Capability that wraps the client and retires Feign's Retryer. */
module dev.stagger.feign {
    requires transitive dev.stagger.http;
    requires transitive feign.core;
    requires static org.jspecify; // the nullness annotations: compile time only, and not required of readers

    exports dev.stagger.feign;
}
