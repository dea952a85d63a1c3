package dev.stagger.idempotency;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.stagger.jdbc.Database;
import dev.stagger.jdbc.SchemaMode;
import dev.stagger.jdbc.SchemaNotReadyException;
import dev.stagger.jdbc.SqliteDataSource;
import dev.stagger.jdbc.internal.Dialect;
import dev.stagger.jdbc.internal.SchemaMigrations;
import dev.stagger.testsupport.jdbc.ShippedSqlContract;
import java.time.Duration;
import java.util.Map;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;

/**
 * The plain SQL files shipped for migration tools ({@code src/main/resources/dev/stagger/idempotency/sql/})
 * are the store's own schema definition rendered as SQL ({@link ShippedSqlContract}: the files match
 * it, and a PostgreSQL schema set up from them is accepted), and a SQLite file set up from them too.
 */
class ShippedSqlTest extends ShippedSqlContract {

    /** The definition as the store builds it with the defaults: prefix stagger_, no schema. */
    private SchemaMigrations definition() {
        return JdbcIdempotencyStore.builder(SqliteDataSource.file(dir.resolve("unused.db"))).schemaMigrations();
    }

    @Override
    protected String component() {
        return "idempotency";
    }

    @Override
    protected int latestVersion() {
        return definition().latestVersion();
    }

    @Override
    protected String script(String folder, int version) {
        return definition().script(folder.equals("postgresql") ? Dialect.POSTGRESQL : Dialect.SQLITE, version);
    }

    @Override
    protected void useAStoreThatNeverChangesTheSchema(DataSource db) {
        try (JdbcIdempotencyStore store = JdbcIdempotencyStore.builder(db).schemaMode(SchemaMode.VALIDATE).build()) {
            claimAndComplete(store);
            assertThat(store.count()).isEqualTo(1);
        }
    }

    @Test
    void aSqliteFileSetUpFromTheShippedSqlIsAcceptedByAStoreThatNeverChangesTheSchema() throws Exception {
        DataSource db = SqliteDataSource.file(dir.resolve("flyway.db"));
        runShipped(db, "sqlite");

        useAStoreThatNeverChangesTheSchema(db);
        try (JdbcIdempotencyStore migrating = JdbcIdempotencyStore.builder(db).build()) {
            assertThat(migrating.count()).as("MIGRATE found the version recorded and ran nothing").isEqualTo(1);
        }
    }

    @Test
    void aStoreThatMayNotChangeTheSchemaRefusesAnEmptyDatabaseNamingTheTables() {
        DataSource db = SqliteDataSource.file(dir.resolve("empty.db"));

        assertThatThrownBy(() -> JdbcIdempotencyStore.builder(db).tablePrefix("shop_").schemaMode(SchemaMode.VALIDATE).build())
                .isInstanceOfSatisfying(SchemaNotReadyException.class, e -> {
                    assertThat(e.missingTables()).containsExactly("shop_schema_version", "shop_idempotency");
                    assertThat(e.getMessage()).contains("empty.db").contains("idempotency:shop_idempotency");
                });
    }

    @Test
    void theDefinitionRendersAnotherPrefixAndSchemaForMigrationTools() {
        String sql = JdbcIdempotencyStore.builder(SqliteDataSource.file(dir.resolve("unused.db"))).tablePrefix("shop_")
                .schema("billing").schemaScript(Database.POSTGRESQL);

        assertThat(sql).contains("CREATE SCHEMA IF NOT EXISTS billing;")
                .contains("CREATE TABLE IF NOT EXISTS billing.shop_schema_version")
                .contains("CREATE TABLE billing.shop_idempotency (")
                .contains("CREATE INDEX shop_idempotency_expires ON billing.shop_idempotency (expires_at);")
                .contains("INSERT INTO billing.shop_schema_version (component, version) VALUES ('idempotency:shop_idempotency', 1);");
    }

    private static void claimAndComplete(JdbcIdempotencyStore store) {
        IdempotencyScope scope = new IdempotencyScope("alice", "POST", "/orders", IdempotencyKey.of("k1"));
        RequestFingerprint fp = RequestFingerprint.of("POST", "/orders", null, Map.of(), new byte[0]);
        Claim.Acquired a = (Claim.Acquired) store.claim(scope, fp, Duration.ofSeconds(60), Duration.ofHours(1));
        assertThat(store.complete(scope, a.leaseToken(), StoredResponse.of(201, Map.of(), new byte[0]),
                Duration.ofHours(1))).isTrue();
    }
}
