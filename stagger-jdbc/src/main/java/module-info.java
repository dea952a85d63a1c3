/** Retried JDBC transactions, SQL failure classification, and the plumbing Stagger's stores share. */
@SuppressWarnings("module") // qualified exports name Stagger modules that are compiled later
module dev.stagger.jdbc {
    requires transitive dev.stagger.core;
    requires transitive java.sql;
    requires static org.jspecify; // the nullness annotations: compile time only, and not required of readers

    exports dev.stagger.jdbc;

    exports dev.stagger.jdbc.internal to dev.stagger.idempotency, dev.stagger.jobs, dev.stagger.inbox;
}
