package dev.stagger.idempotency;

import dev.stagger.idempotency.support.PostgresTables;
import dev.stagger.testsupport.jdbc.TestDatabases;
import dev.stagger.testing.VirtualClock;
import java.time.Duration;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterEach;

/** The contract on PostgreSQL with the default: leases and expiries on the database server's clock. */
class PostgresIdempotencyStoreTest extends IdempotencyStoreContract {
    private DataSource dataSource;
    private final String prefix = PostgresTables.uniquePrefix();

    @Override
    IdempotencyStore newStore(VirtualClock clock) {
        dataSource = TestDatabases.postgres();
        JdbcIdempotencyStore store = JdbcIdempotencyStore.builder(dataSource).tablePrefix(prefix).clock(clock).build();
        org.assertj.core.api.Assertions.assertThat(store.usesDatabaseClock()).isTrue();
        return store;
    }

    @Override
    void advance(Duration d) throws Exception {
        super.advance(d); // moves the store's clock, which must change nothing
        shiftBack(dataSource, prefix + "idempotency", d);
    }

    @AfterEach
    void dropTable() throws Exception {
        if (dataSource != null) {
            PostgresTables.drop(dataSource, prefix);
        }
    }
}
