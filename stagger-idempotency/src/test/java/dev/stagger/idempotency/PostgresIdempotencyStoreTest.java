package dev.stagger.idempotency;

import dev.stagger.idempotency.support.PostgresTables;
import dev.stagger.jdbc.testsupport.TestDatabases;
import dev.stagger.testing.VirtualClock;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterEach;

class PostgresIdempotencyStoreTest extends IdempotencyStoreContract {
    private DataSource dataSource;
    private final String table = PostgresTables.uniqueName();

    @Override
    IdempotencyStore newStore(VirtualClock clock) {
        dataSource = TestDatabases.postgres();
        return JdbcIdempotencyStore.builder(dataSource).tableName(table).clock(clock).build();
    }

    @AfterEach
    void dropTable() throws Exception {
        if (dataSource != null) {
            PostgresTables.drop(dataSource, table);
        }
    }
}
