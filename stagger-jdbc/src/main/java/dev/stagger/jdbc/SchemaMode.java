package dev.stagger.jdbc;

/** What a store does with its schema when it starts. */
public enum SchemaMode {
    /**
     * Create the tables when missing and run the steps past the recorded version (the default):
     * safe at every start-up and from several servers at once.
     */
    MIGRATE,
    /**
     * Change nothing: check that the tables exist and that the recorded version is the one this
     * release needs, and fail with {@link SchemaNotReadyException} naming what is missing
     * otherwise. For databases whose schema is applied by a migration tool (Flyway, Liquibase)
     * from the SQL files each store ships, or by an operator.
     */
    VALIDATE
}
