package dev.stagger.jdbc.internal;

import dev.stagger.jdbc.Database;
import dev.stagger.jdbc.StoreOptions;
import java.sql.SQLException;
import javax.sql.DataSource;

/** What every store does with its {@link StoreOptions} when it is built, written once. */
public final class StoreSetup {
    private StoreSetup() {
    }

    /**
     * Detects the database and checks the store can run there: SQLite or PostgreSQL, and a schema
     * only on PostgreSQL.
     *
     * @throws IllegalArgumentException naming the database otherwise
     */
    public static Dialect dialect(DataSource dataSource, StoreOptions options) throws SQLException {
        Dialect dialect = Dialect.of(dataSource);
        if (dialect != Dialect.SQLITE && dialect != Dialect.POSTGRESQL) {
            throw new IllegalArgumentException("dataSource must be SQLite or PostgreSQL, got " + dialect);
        }
        if (options.schema().isPresent() && dialect != Dialect.POSTGRESQL) {
            throw new IllegalArgumentException("schema is supported on PostgreSQL only, got " + dialect);
        }
        return dialect;
    }

    /** Whether a store on {@code dialect} (SQLite or PostgreSQL) reads the database's clock. */
    public static boolean databaseClock(StoreOptions options, Dialect dialect) {
        return options.usesDatabaseClock(dialect == Dialect.POSTGRESQL ? Database.POSTGRESQL : Database.SQLITE);
    }
}
