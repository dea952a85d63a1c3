package dev.stagger.idempotency;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.stagger.jdbc.SqliteDataSource;
import dev.stagger.jdbc.StoreOptions;
import dev.stagger.jdbc.internal.SimpleDataSource;
import dev.stagger.testing.VirtualClock;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SqliteIdempotencyStoreTest extends IdempotencyStoreContract {
    @TempDir
    Path dir;

    @Override
    IdempotencyStore newStore(VirtualClock clock) {
        return JdbcIdempotencyStore.builder(SqliteDataSource.file(dir.resolve("idempotency.db"))).clock(clock).build();
    }

    @Test
    void theEmbeddedDefaultIsASqliteFileThatSurvivesReopening() {
        Path file = dir.resolve("sub/keys.db");
        JdbcIdempotencyStore first = JdbcIdempotencyStore.sqlite(file);
        Claim.Acquired a = (Claim.Acquired) first.claim(scope("alice", "k1"), fingerprint("{}"), LEASE, EXPIRY);
        first.complete(scope("alice", "k1"), a.leaseToken(), created("{}"), EXPIRY);

        JdbcIdempotencyStore reopened = JdbcIdempotencyStore.sqlite(file);

        assertThat(reopened.find(scope("alice", "k1")).orElseThrow().response()).contains(created("{}"));
        assertThat(reopened.tableName()).isEqualTo(JdbcIdempotencyStore.DEFAULT_TABLE);
    }

    @Test
    void aClaimCommitsEvenWhenTheDataSourceHandsOutConnectionsOutsideAutoCommit() {
        DataSource sqlite = SqliteDataSource.file(dir.resolve("manual.db"));
        DataSource manualCommit = new SimpleDataSource() {
            @Override
            public Connection getConnection() throws SQLException {
                Connection c = sqlite.getConnection();
                c.setAutoCommit(false); // as a pool configured with autoCommit=false hands them out
                return c;
            }
        };
        try (JdbcIdempotencyStore manual = JdbcIdempotencyStore.builder(manualCommit).clock(clock).build()) {
            assertThat(manual.claim(scope("alice", "k1"), fingerprint("{}"), LEASE, EXPIRY))
                    .isInstanceOf(Claim.Acquired.class);

            assertThat(manual.claim(scope("alice", "k1"), fingerprint("{}"), LEASE, EXPIRY))
                    .as("the first claim was committed, so a repeat must wait")
                    .isInstanceOf(Claim.InFlight.class);
        }
    }

    @Test
    void aTablePrefixThatIsNotPlainIsRefusedNamingTheFieldAndACappedValue() {
        assertThatThrownBy(() -> JdbcIdempotencyStore.builder(SqliteDataSource.file(dir.resolve("x.db")))
                .tablePrefix("keys; DROP TABLE users"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("tablePrefix").hasMessageContaining("'keys; DROP TABLE users'");
        assertThatThrownBy(() -> JdbcIdempotencyStore.builder(SqliteDataSource.file(dir.resolve("x.db")))
                .tablePrefix("x".repeat(10_000)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("(10000 characters)").message().hasSizeLessThan(200);
    }

    @Test
    void theStoreKeepsItsClockOnSqliteByDefault() {
        assertThat(((JdbcIdempotencyStore) store).usesDatabaseClock()).isFalse();
    }

    @Test
    void aSchemaIsRefusedOnSqlite() {
        assertThatThrownBy(() -> JdbcIdempotencyStore.builder(SqliteDataSource.file(dir.resolve("x.db"))).schema("app").build())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("schema");
    }

    @Test
    void optionsGivenAtOnceSetThePrefixAndTheDatabaseClock() {
        try (JdbcIdempotencyStore shop = JdbcIdempotencyStore.builder(SqliteDataSource.file(dir.resolve("x.db")))
                .storeOptions(StoreOptions.builder().tablePrefix("shop_").databaseClock(true).build()).build()) {
            assertThat(shop.tableName()).isEqualTo("shop_idempotency");
            assertThat(shop.usesDatabaseClock()).isTrue();
        }
    }
}
