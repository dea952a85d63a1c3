package dev.stagger.idempotency;

import dev.stagger.idempotency.support.PostgresTables;
import dev.stagger.testsupport.jdbc.TestDatabases;
import dev.stagger.testing.VirtualClock;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterEach;

/** The contract on PostgreSQL with {@code databaseClock(false)}: times from the store's (virtual) clock. */
class PostgresStoreClockTest extends IdempotencyStoreContract {
    private DataSource dataSource;
    private final String prefix = PostgresTables.uniquePrefix();

    @Override
    IdempotencyStore newStore(VirtualClock clock) {
        dataSource = TestDatabases.postgres();
        return JdbcIdempotencyStore.builder(dataSource).tablePrefix(prefix).databaseClock(false).clock(clock).build();
    }

    @AfterEach
    void dropTable() throws Exception {
        if (dataSource != null) {
            PostgresTables.drop(dataSource, prefix);
        }
    }
}
