/** Server-side adaptive load shedding. The servlet API is provided by the container. */
module dev.stagger.shedding {
    requires transitive dev.stagger.core;
    requires static transitive jakarta.servlet;
    requires static transitive org.jspecify; // the nullness annotations in the API: compile time only

    exports dev.stagger.shedding;
}
