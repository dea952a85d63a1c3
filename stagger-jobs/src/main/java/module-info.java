/**
 * Durable background jobs in a database table. The PostgreSQL driver is optional: with it on the
 * module path a pool wakes on LISTEN/NOTIFY instead of polling alone.
 */
@SuppressWarnings("requires-automatic") // the PostgreSQL driver has no module descriptor
module dev.stagger.jobs {
    requires transitive dev.stagger.core;
    requires transitive dev.stagger.jdbc;
    requires static org.postgresql.jdbc;
    requires static org.jspecify; // the nullness annotations: compile time only, and not required of readers

    exports dev.stagger.jobs;
}
