package dev.stagger.jobs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.stagger.jdbc.SqliteDataSource;
import dev.stagger.jdbc.StoreOptions;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A table prefix covers every table the store writes, the schema-version table included; the store options set it too. */
class TablePrefixSchemaTest {
    @TempDir
    Path dir;

    private static long query(DataSource db, String sql) throws SQLException {
        try (Connection c = db.getConnection(); Statement s = c.createStatement(); ResultSet rs = s.executeQuery(sql)) {
            rs.next();
            return rs.getLong(1);
        }
    }

    private static boolean table(DataSource db, String name) throws SQLException {
        return query(db, "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = '" + name + "'") == 1;
    }

    @Test
    void aPrefixedStoreWritesNoTableOutsideItsPrefix() throws SQLException {
        DataSource db = SqliteDataSource.file(dir.resolve("jobs.db"));

        JobQueue.builder(db).tablePrefix("x_").build();

        assertThat(table(db, "stagger_schema_version")).isFalse();
        assertThat(table(db, "x_schema_version")).isTrue();
    }

    @Test
    void aDatabaseAnEarlierReleaseSetUpWithThePrefixIsRecognisedAndKeepsItsJobs() throws SQLException {
        DataSource db = SqliteDataSource.file(dir.resolve("jobs.db"));
        long id = JobQueue.builder(db).tablePrefix("x_").build().enqueue("q", "t", "kept");
        try (Connection c = db.getConnection(); Statement s = c.createStatement()) {
            // as releases before the prefix covered the version table left it
            s.execute("CREATE TABLE stagger_schema_version (component VARCHAR(100) PRIMARY KEY, version INTEGER NOT NULL)");
            s.execute("INSERT INTO stagger_schema_version SELECT component, version FROM x_schema_version");
            s.execute("DROP TABLE x_schema_version");
        }

        JobQueue reopened = JobQueue.builder(db).tablePrefix("x_").build();

        assertThat(reopened.admin().find(id)).isPresent();
        assertThat(query(db, "SELECT version FROM x_schema_version WHERE component = 'x_jobs'"))
                .as("adopted, then upgraded to this release's version")
                .isEqualTo(JobQueue.builder(db).tablePrefix("x_").schemaMigrations().latestVersion());
    }

    @Test
    void optionsGivenAtOnceSetThePrefix() throws SQLException {
        DataSource db = SqliteDataSource.file(dir.resolve("jobs.db"));

        JobQueue.builder(db).storeOptions(StoreOptions.builder().tablePrefix("x_").build()).build().enqueue("q", "t", "p");

        assertThat(query(db, "SELECT count(*) FROM x_jobs")).isEqualTo(1);
        assertThat(table(db, "stagger_jobs")).isFalse();
    }

    @Test
    void optionsWithASchemaAreRefusedNamingTheSchema() {
        DataSource db = SqliteDataSource.file(dir.resolve("jobs.db"));

        assertThatThrownBy(() -> JobQueue.builder(db).storeOptions(StoreOptions.builder().schema("billing").build()))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("schema is not supported by the job queue, got 'billing'");
    }
}
