/** Retried JDBC transactions, SQL failure classification, and the plumbing Stagger's stores share. */
@SuppressWarnings("module") // qualified exports name Stagger modules that are compiled later
module dev.stagger.jdbc {
    requires transitive dev.stagger.core;
    requires transitive java.sql;
    requires static transitive org.jspecify; // the nullness annotations in the API: compile time only

    exports dev.stagger.jdbc;

    exports dev.stagger.jdbc.internal to dev.stagger.idempotency, dev.stagger.jobs, dev.stagger.inbox;
}
