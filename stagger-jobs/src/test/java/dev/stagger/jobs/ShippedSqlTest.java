package dev.stagger.jobs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.stagger.jdbc.Database;
import dev.stagger.jdbc.SchemaMode;
import dev.stagger.jdbc.SchemaNotReadyException;
import dev.stagger.jdbc.SqliteDataSource;
import dev.stagger.jdbc.internal.Dialect;
import dev.stagger.jdbc.internal.SchemaMigrations;
import dev.stagger.testing.VirtualClock;
import dev.stagger.testsupport.jdbc.ShippedSqlContract;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;

/**
 * The plain SQL files shipped for migration tools ({@code src/main/resources/dev/stagger/jobs/sql/})
 * are the store's own schema definition rendered as SQL ({@link ShippedSqlContract}: the files match
 * it, and a PostgreSQL schema set up from them is accepted), and a SQLite file set up from them too.
 */
class ShippedSqlTest extends ShippedSqlContract {

    /** The definition as the store builds it with the defaults: prefix stagger_. */
    private SchemaMigrations definition() {
        return JobQueue.builder(SqliteDataSource.file(dir.resolve("unused.db"))).schemaMigrations();
    }

    @Override
    protected String component() {
        return "jobs";
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
        runOneJob(JobQueue.builder(db).schemaMode(SchemaMode.VALIDATE).build());
    }

    @Test
    void aSqliteFileSetUpFromTheShippedSqlIsAcceptedByAStoreThatNeverChangesTheSchema() throws Exception {
        DataSource db = SqliteDataSource.file(dir.resolve("flyway.db"));
        runShipped(db, "sqlite");

        runOneJob(JobQueue.builder(db).schemaMode(SchemaMode.VALIDATE).clock(new VirtualClock()).build());
        JobQueue migrating = JobQueue.builder(db).build();
        assertThat(migrating.admin().countByState(null).get(JobState.SUCCEEDED)).as("MIGRATE found the version recorded")
                .isEqualTo(1);
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
}
