package dev.stagger.jdbc;

/**
 * A database that Stagger's stores support, for asking a store for the SQL it would apply there
 * ({@code JobQueue.builder(ds).schemaScript(Database.POSTGRESQL)}), so that a migration tool can
 * apply it instead of the store.
 */
public enum Database {
    /** PostgreSQL. */
    POSTGRESQL,
    /** SQLite (one file). */
    SQLITE
}
