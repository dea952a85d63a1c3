package dev.stagger.idempotency;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.stagger.idempotency.support.PostgresTables;
import dev.stagger.testsupport.jdbc.TestDatabases;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The claim of a transactional route: visible to repeats at once, and leaving its connection as it found it. */
class ClaimForTransactionTest {
    private static final RequestFingerprint FINGERPRINT = RequestFingerprint.of("POST", "/orders", null,
            java.util.Map.of(), "{}".getBytes(StandardCharsets.UTF_8));

    @Test
    void aClaimForATransactionIsSeenByRepeatsAndLeavesTheConnectionsCommitSettingAlone() throws Exception {
        DataSource pg = TestDatabases.postgres();
        String prefix = PostgresTables.uniquePrefix();
        HikariConfig config = new HikariConfig();
        config.setDataSource(pg);
        config.setMaximumPoolSize(1); // the claim's connection is the one the check below gets
        try (HikariDataSource one = new HikariDataSource(config)) {
            JdbcIdempotencyStore store = JdbcIdempotencyStore.builder(one).tablePrefix(prefix).build();
            IdempotencyScope scope = new IdempotencyScope("client:a", "POST", "/orders",
                    IdempotencyKey.parse("k-1").orElseThrow());
            try {
                assertThat(store.claimForTransaction(scope, FINGERPRINT, Duration.ofMinutes(1), Duration.ofHours(1)))
                        .isInstanceOf(Claim.Acquired.class);
                assertThat(store.claim(scope, FINGERPRINT, Duration.ofMinutes(1), Duration.ofHours(1)))
                        .as("a repeat").isInstanceOf(Claim.InFlight.class);
                try (Connection c = one.getConnection(); Statement s = c.createStatement();
                     ResultSet rs = s.executeQuery("SHOW synchronous_commit")) {
                    rs.next();
                    assertThat(rs.getString(1)).isEqualTo("on");
                }
            } finally {
                PostgresTables.drop(one, prefix);
            }
        }
    }

    @Test
    void sqliteHasNoClaimForATransaction(@TempDir Path dir) {
        try (JdbcIdempotencyStore store = JdbcIdempotencyStore.sqlite(dir.resolve("keys.db"))) {
            IdempotencyScope scope = new IdempotencyScope("client:a", "POST", "/orders",
                    IdempotencyKey.parse("k-1").orElseThrow());
            assertThatThrownBy(() -> store.claimForTransaction(scope, FINGERPRINT, Duration.ofMinutes(1),
                    Duration.ofHours(1))).isInstanceOf(IllegalStateException.class)
                    .hasMessage("claimForTransaction needs PostgreSQL, got SQLITE");
        }
    }
}
