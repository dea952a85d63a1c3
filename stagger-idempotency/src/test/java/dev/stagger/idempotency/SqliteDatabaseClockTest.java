package dev.stagger.idempotency;

import dev.stagger.jdbc.SqliteDataSource;
import dev.stagger.testing.VirtualClock;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.io.TempDir;

/** The contract on SQLite with {@code databaseClock(true)}: times from SQLite's own {@code 'now'}. */
class SqliteDatabaseClockTest extends IdempotencyStoreContract {
    @TempDir
    Path dir;

    @Override
    IdempotencyStore newStore(VirtualClock clock) {
        JdbcIdempotencyStore store = JdbcIdempotencyStore.builder(SqliteDataSource.file(dir.resolve("idempotency.db")))
                .databaseClock(true).clock(clock).build();
        org.assertj.core.api.Assertions.assertThat(store.usesDatabaseClock()).isTrue();
        return store;
    }

    @Override
    void advance(Duration d) throws Exception {
        super.advance(d); // moves the store's clock, which must change nothing
        shiftBack(SqliteDataSource.file(dir.resolve("idempotency.db")), JdbcIdempotencyStore.DEFAULT_TABLE, d);
    }

    @AfterEach
    void close() {
        ((JdbcIdempotencyStore) store).close();
    }
}
