/** Server-side adaptive load shedding. The servlet API is provided by the container. */
module dev.stagger.shedding {
    requires transitive dev.stagger.core;
    requires static transitive jakarta.servlet;
    requires static dev.stagger.http; // the header names only: compile-time constants
    requires static org.jspecify; // the nullness annotations: compile time only, and not required of readers

    exports dev.stagger.shedding;
}
