/** Server-side adaptive load shedding. The servlet API is provided by the container. */
module dev.stagger.shedding {
    requires transitive dev.stagger.core;
    requires static transitive jakarta.servlet;
    requires static org.jspecify;

    exports dev.stagger.shedding;
}
