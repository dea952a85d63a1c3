/**
 * Server-side idempotency keys: a servlet filter that runs a keyed request once and replays its
 * response, over an in-memory or JDBC store. The servlet API is provided by the container.
 */
module dev.stagger.idempotency {
    requires transitive dev.stagger.core;
    requires transitive dev.stagger.jdbc;
    requires static transitive jakarta.servlet;
    requires static org.jspecify; // the nullness annotations: compile time only, and not required of readers

    exports dev.stagger.idempotency;
    exports dev.stagger.idempotency.servlet;
}
