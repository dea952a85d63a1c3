/**
 * Server-side idempotency keys: a servlet filter that runs a keyed request once and replays its
 * response, over an in-memory or JDBC store. The servlet API is provided by the container.
 */
module dev.stagger.idempotency {
    requires transitive dev.stagger.core;
    requires transitive dev.stagger.jdbc;
    requires static transitive jakarta.servlet;
    requires static transitive org.jspecify; // the nullness annotations in the API: compile time only

    exports dev.stagger.idempotency;
    exports dev.stagger.idempotency.servlet;
}
