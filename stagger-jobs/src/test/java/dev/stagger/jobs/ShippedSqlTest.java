package dev.stagger.jobs;

import dev.stagger.jdbc.Database;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.stagger.jdbc.internal.Dialect;
import dev.stagger.jdbc.internal.SchemaMigrations;
import dev.stagger.jdbc.SchemaMode;
import dev.stagger.jdbc.SchemaNotReadyException;
import dev.stagger.jdbc.SqliteDataSource;
import dev.stagger.jdbc.UrlDataSource;
import dev.stagger.testing.VirtualClock;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.UUID;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The plain SQL files shipped for migration tools ({@code src/main/resources/dev/stagger/jobs/sql/})
 * are the store's own schema definition rendered as SQL: this test fails when they drift apart.
 * After changing the schema, regenerate them with {@code -Dstagger.sql.write=true} (then run again: the
 * copies on the classpath are checked too) and review the diff.
 */
class ShippedSqlTest {
    private static final Path SOURCES = Path.of("src/main/resources/dev/stagger/jobs/sql");
    private static final Map<Dialect, String> FOLDERS = Map.of(Dialect.POSTGRESQL, "postgresql", Dialect.SQLITE, "sqlite");

    @TempDir
    Path dir;

    /** The definition as the store builds it with the defaults: prefix stagger_. */
    private SchemaMigrations definition() {
        return JobQueue.builder(SqliteDataSource.file(dir.resolve("unused.db"))).schemaMigrations();
    }

    private static String fileName(int version) {
        return "V" + version + "__stagger_jobs.sql";
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
                try (InputStream in = getClass().getResourceAsStream("/dev/stagger/jobs/sql/" + e.getValue() + "/"
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

        JobQueue jobs = JobQueue.builder(db).schemaMode(SchemaMode.VALIDATE).clock(new VirtualClock()).build();
        runOneJob(jobs);
        JobQueue migrating = JobQueue.builder(db).build();
        assertThat(migrating.admin().countByState(null).get(JobState.SUCCEEDED)).as("MIGRATE found the version recorded")
                .isEqualTo(1);
    }

    @Test
    void aPostgresqlDatabaseSetUpFromTheShippedSqlIsAcceptedByAStoreThatNeverChangesTheSchema() throws Exception {
        UrlDataSource admin = Stores.postgres();
        String schema = "jobs_sql_" + UUID.randomUUID().toString().substring(0, 8);
        Stores.exec(admin, "CREATE SCHEMA " + schema);
        try {
            // the files name no schema: as a migration tool runs them, against the connection's current schema
            DataSource db = UrlDataSource.of(admin.url() + (admin.url().contains("?") ? "&" : "?") + "currentSchema=" + schema,
                    Stores.pgUser(), Stores.pgPassword());
            runShipped(db, "postgresql");

            runOneJob(JobQueue.builder(db).schemaMode(SchemaMode.VALIDATE).build());
        } finally {
            Stores.exec(admin, "DROP SCHEMA " + schema + " CASCADE");
        }
    }

    @Test
    void aStoreThatMayNotChangeTheSchemaRefusesAnEmptyDatabaseNamingItAndTheTables() {
        DataSource db = SqliteDataSource.file(dir.resolve("empty.db"));

        assertThatThrownBy(() -> JobQueue.builder(db).tablePrefix("shop_").schemaMode(SchemaMode.VALIDATE).build())
                .isInstanceOfSatisfying(SchemaNotReadyException.class, e -> {
                    assertThat(e.missingTables()).containsExactly("shop_schema_version", "shop_jobs", "shop_job_errors");
                    assertThat(e.getMessage()).contains("empty.db").contains("shop_jobs");
                });
    }

    @Test
    void theDefinitionRendersAnotherPrefixForMigrationTools() {
        String sql = JobQueue.builder(SqliteDataSource.file(dir.resolve("unused.db"))).tablePrefix("shop_")
                .schemaScript(Database.POSTGRESQL);

        assertThat(sql).contains("CREATE TABLE IF NOT EXISTS shop_schema_version")
                .contains("CREATE TABLE shop_jobs (")
                .contains("CREATE INDEX shop_jobs_dead ON shop_jobs (queue, finished_at) WHERE state = 'DEAD';")
                .contains("INSERT INTO shop_schema_version (component, version) VALUES ('shop_jobs', 1);")
                .contains("UPDATE shop_schema_version SET version = 3 WHERE component = 'shop_jobs';");
    }

    private static void runOneJob(JobQueue jobs) {
        long id = jobs.enqueue("q", "t", "x");
        WorkerPool.builder(jobs, "q").handler("t", ctx -> { }).build().runAvailable();
        assertThat(jobs.admin().find(id).orElseThrow().state()).isEqualTo(JobState.SUCCEEDED);
    }

    /** Applies the shipped files in version order, statement by statement, as a migration tool does. */
    private static void runShipped(DataSource db, String folder) throws Exception {
        try (var files = Files.list(SOURCES.resolve(folder))) {
            for (Path file : files.sorted().toList()) {
                for (String statement : Files.readString(file).split(";\n")) {
                    String sql = statement.lines().filter(l -> !l.startsWith("--")).reduce("", (a, b) -> a + b + "\n").trim();
                    if (!sql.isEmpty()) {
                        Stores.exec(db, sql);
                    }
                }
            }
        }
    }
}
