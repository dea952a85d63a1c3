package dev.stagger.idempotency;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.stagger.jdbc.SqliteDataSource;
import dev.stagger.testing.VirtualClock;
import java.nio.file.Path;
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
    void aTableNameThatIsNotAPlainIdentifierIsRefusedAtBuildTime() {
        assertThatThrownBy(() -> JdbcIdempotencyStore.builder(SqliteDataSource.file(dir.resolve("x.db")))
                .tableName("keys; DROP TABLE users"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("tableName");
    }
}
