package dev.stagger.idempotency;

import dev.stagger.jdbc.Database;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.stagger.jdbc.internal.Dialect;
import dev.stagger.jdbc.internal.SchemaMigrations;
import dev.stagger.jdbc.SchemaMode;
import dev.stagger.jdbc.SchemaNotReadyException;
import dev.stagger.jdbc.SqliteDataSource;
import dev.stagger.jdbc.UrlDataSource;
import dev.stagger.testsupport.jdbc.TestDatabases;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Map;
import java.util.UUID;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The plain SQL files shipped for migration tools ({@code src/main/resources/dev/stagger/idempotency/sql/})
 * are the store's own schema definition rendered as SQL: this test fails when they drift apart.
 * After changing the schema, regenerate them with {@code -Dstagger.sql.write=true} and review the diff.
 */
class ShippedSqlTest {
    private static final Path SOURCES = Path.of("src/main/resources/dev/stagger/idempotency/sql");
    private static final Map<Dialect, String> FOLDERS = Map.of(Dialect.POSTGRESQL, "postgresql", Dialect.SQLITE, "sqlite");

    @TempDir
    Path dir;

    /** The definition as the store builds it with the defaults: prefix stagger_, no schema. */
    private SchemaMigrations definition() {
        return JdbcIdempotencyStore.builder(SqliteDataSource.file(dir.resolve("unused.db"))).schemaMigrations();
    }

    private static String fileName(int version) {
        return "V" + version + "__stagger_idempotency.sql";
    }

    @Test
    void everyShippedFileIsExactlyWhatTheStoreApplies() throws IOException {
        SchemaMigrations definition = definition();
        boolean write = Boolean.getBoolean("stagger.sql.write");
        for (Map.Entry<Dialect, String> e : FOLDERS.entrySet()) {
            for (int v = 1; v <= definition.latestVersion(); v++) {
                Path file = SOURCES.resolve(e.getValue()).resolve(fileName(v));
                String expected = definition.script(e.getKey(), v);
                if (write) {
                    Files.createDirectories(file.getParent());
                    Files.writeString(file, expected);
                }
                assertThat(file).as("shipped for %s, version %d (regenerate with -Dstagger.sql.write=true)", e.getKey(), v)
                        .exists().hasContent(expected);
                try (InputStream in = getClass().getResourceAsStream("/dev/stagger/idempotency/sql/" + e.getValue() + "/"
                        + fileName(v))) {
                    assertThat(in).as("on the classpath, as it is in the jar").isNotNull();
                    assertThat(new String(in.readAllBytes(), StandardCharsets.UTF_8)).isEqualTo(expected);
                }
            }
            try (var files = Files.list(SOURCES.resolve(e.getValue()))) {
                assertThat(files).as("no file for a version the store does not know").hasSize(definition.latestVersion());
            }
        }
    }

    @Test
    void aSqliteFileSetUpFromTheShippedSqlIsAcceptedByAStoreThatNeverChangesTheSchema() throws Exception {
        DataSource db = SqliteDataSource.file(dir.resolve("flyway.db"));
        runShipped(db, "sqlite");

        try (JdbcIdempotencyStore store = JdbcIdempotencyStore.builder(db).schemaMode(SchemaMode.VALIDATE).build()) {
            claimAndComplete(store);
        }
        try (JdbcIdempotencyStore migrating = JdbcIdempotencyStore.builder(db).build()) {
            assertThat(migrating.count()).as("MIGRATE found the version recorded and ran nothing").isEqualTo(1);
        }
    }

    @Test
    void aPostgresqlDatabaseSetUpFromTheShippedSqlIsAcceptedByAStoreThatNeverChangesTheSchema() throws Exception {
        UrlDataSource admin = (UrlDataSource) TestDatabases.postgres();
        String schema = "idem_sql_" + UUID.randomUUID().toString().substring(0, 8);
        exec(admin, "CREATE SCHEMA " + schema);
        try {
            // the files name no schema: as a migration tool runs them, against the connection's current schema
            DataSource db = UrlDataSource.of(admin.url() + (admin.url().contains("?") ? "&" : "?") + "currentSchema=" + schema,
                    System.getenv().getOrDefault("STAGGER_PG_USER", "postgres"),
                    System.getenv().getOrDefault("STAGGER_PG_PASSWORD", ""));
            runShipped(db, "postgresql");

            try (JdbcIdempotencyStore store = JdbcIdempotencyStore.builder(db).schemaMode(SchemaMode.VALIDATE).build()) {
                claimAndComplete(store);
                assertThat(store.count()).isEqualTo(1);
            }
        } finally {
            exec(admin, "DROP SCHEMA " + schema + " CASCADE");
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
        Claim.Acquired a = (Claim.Acquired) store.claim(scope, fp, java.time.Duration.ofSeconds(60),
                java.time.Duration.ofHours(1));
        assertThat(store.complete(scope, a.leaseToken(), StoredResponse.of(201, Map.of(), new byte[0]),
                java.time.Duration.ofHours(1))).isTrue();
    }

    /** Applies the shipped files in version order, statement by statement, as a migration tool does. */
    private static void runShipped(DataSource db, String folder) throws IOException, SQLException {
        try (var files = Files.list(SOURCES.resolve(folder))) {
            for (Path file : files.sorted().toList()) {
                for (String statement : Files.readString(file).split(";\n")) {
                    String sql = statement.lines().filter(l -> !l.startsWith("--")).reduce("", (a, b) -> a + b + "\n").trim();
                    if (!sql.isEmpty()) {
                        exec(db, sql);
                    }
                }
            }
        }
    }

    private static void exec(DataSource db, String sql) throws SQLException {
        try (Connection c = db.getConnection(); Statement s = c.createStatement()) {
            s.execute(sql);
        }
    }
}
