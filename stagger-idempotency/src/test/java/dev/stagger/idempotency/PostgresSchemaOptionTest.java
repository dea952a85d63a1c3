package dev.stagger.idempotency;

import static org.assertj.core.api.Assertions.assertThat;

import dev.stagger.testsupport.jdbc.TestDatabases;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;

/** The store's tables in a PostgreSQL schema of their own, named on the store rather than in the URL. */
class PostgresSchemaOptionTest {

    private static String scalar(DataSource ds, String sql) throws Exception {
        try (Connection c = ds.getConnection(); Statement s = c.createStatement(); ResultSet rs = s.executeQuery(sql)) {
            rs.next();
            return rs.getString(1);
        }
    }

    @Test
    void theStoreCreatesAndUsesItsTablesInTheNamedSchema() throws Exception {
        DataSource pg = TestDatabases.postgres();
        String schema = "idem_schema_" + UUID.randomUUID().toString().substring(0, 8);
        try {
            JdbcIdempotencyStore store = JdbcIdempotencyStore.builder(pg).schema(schema).tablePrefix("shop_").build();
            IdempotencyScope scope = new IdempotencyScope("alice", "POST", "/orders", IdempotencyKey.of("k1"));
            RequestFingerprint fp = RequestFingerprint.of("POST", "/orders", null, Map.of(), new byte[0]);
            StoredResponse created = StoredResponse.of(201, Map.of("Content-Type", List.of("application/json")),
                    "{\"order\":1}".getBytes(StandardCharsets.UTF_8));

            Claim.Acquired claim = (Claim.Acquired) store.claim(scope, fp, Duration.ofSeconds(60), Duration.ofHours(1));
            assertThat(store.complete(scope, claim.leaseToken(), created, Duration.ofHours(1))).isTrue();

            assertThat(store.claim(scope, fp, Duration.ofSeconds(60), Duration.ofHours(1)))
                    .isEqualTo(new Claim.Replay(created));
            assertThat(store.tableName()).isEqualTo(schema + ".shop_idempotency");
            assertThat(scalar(pg, "SELECT count(*) FROM " + schema + ".shop_idempotency")).isEqualTo("1");
            assertThat(scalar(pg, "SELECT version FROM " + schema + ".shop_schema_version"
                    + " WHERE component = 'idempotency:shop_idempotency'")).isEqualTo("1");
            assertThat(scalar(pg, "SELECT to_regclass('shop_idempotency') IS NULL")).as("nothing outside the schema")
                    .isIn("t", "true");
            assertThat(store.purgeExpired(10)).isZero();
            assertThat(JdbcIdempotencyStore.builder(pg).schema(schema).tablePrefix("shop_").build().count())
                    .as("a second server finds the schema in place").isEqualTo(1);
        } finally {
            try (Connection c = pg.getConnection(); Statement s = c.createStatement()) {
                s.execute("DROP SCHEMA IF EXISTS " + schema + " CASCADE");
            }
        }
    }
}
