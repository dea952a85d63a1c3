/**
 * Durable background jobs in a database table. The PostgreSQL driver is optional: with it on the
 * module path a pool wakes on LISTEN/NOTIFY instead of polling alone.
 */
@SuppressWarnings("requires-automatic") // the PostgreSQL driver has no module descriptor
module dev.stagger.jobs {
    requires transitive dev.stagger.core;
    requires transitive dev.stagger.jdbc;
    requires static org.postgresql.jdbc;
    requires static transitive org.jspecify; // the nullness annotations in the API: compile time only

    exports dev.stagger.jobs;
}
