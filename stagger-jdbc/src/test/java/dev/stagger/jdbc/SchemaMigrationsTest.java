package dev.stagger.jdbc;

import dev.stagger.jdbc.internal.Dialect;
import dev.stagger.jdbc.internal.SchemaMigrations;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.stagger.testsupport.jdbc.TestDatabases;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

@Timeout(60)
class SchemaMigrationsTest {
    private static final String COMPONENT = "jdbc_migrations_test";

    @TempDir
    Path dir;

    /** Step 1 creates the table; step 2 seeds a row (not idempotent: running it twice shows). */
    private static List<Function<Dialect, List<String>>> twoSteps(String table) {
        return List.of(
                dialect -> List.of("CREATE TABLE " + table + " (id INT PRIMARY KEY, note VARCHAR(50))"),
                dialect -> List.of("INSERT INTO " + table + " VALUES (1, 'seed')"));
    }

    private static SchemaMigrations migrations(String component, List<Function<Dialect, List<String>>> steps) {
        return SchemaMigrations.builder(component).steps(steps).build();
    }

    private static List<Function<Dialect, List<String>>> threeSteps(String table) {
        List<Function<Dialect, List<String>>> steps = new ArrayList<>(twoSteps(table));
        steps.add(dialect -> List.of("INSERT INTO " + table + " VALUES (2, '" + dialect + "')"));
        return steps;
    }

    @Test
    void appliesEveryStepOnceAndRecordsTheVersion() throws SQLException {
        DataSource db = SqliteDataSource.file(dir.resolve("m.db"));

        assertThat(migrations(COMPONENT, twoSteps("jdbc_mig")).apply(db)).isEqualTo(2);

        assertThat(count(db, "SELECT count(*) FROM jdbc_mig")).isEqualTo(1);
        try (Connection c = db.getConnection()) {
            assertThat(migrations(COMPONENT, List.of()).currentVersion(c)).isEqualTo(2);
            assertThat(migrations("jdbc_unknown_component", List.of()).currentVersion(c)).isZero();
        }
    }

    @Test
    void applyingAgainChangesNothing() throws SQLException {
        DataSource db = SqliteDataSource.file(dir.resolve("m.db"));
        migrations(COMPONENT, twoSteps("jdbc_mig")).apply(db);

        assertThat(migrations(COMPONENT, twoSteps("jdbc_mig")).apply(db)).isEqualTo(2);
        assertThat(count(db, "SELECT count(*) FROM jdbc_mig")).isEqualTo(1);
    }

    @Test
    void aNewStepRunsOnlyThatStep() throws SQLException {
        DataSource db = SqliteDataSource.file(dir.resolve("m.db"));
        migrations(COMPONENT, twoSteps("jdbc_mig")).apply(db);

        assertThat(migrations(COMPONENT, threeSteps("jdbc_mig")).apply(db)).isEqualTo(3);
        assertThat(count(db, "SELECT count(*) FROM jdbc_mig")).isEqualTo(2);
        assertThat(count(db, "SELECT count(*) FROM jdbc_mig WHERE note = 'SQLITE'")).isEqualTo(1);
    }

    @Test
    void componentsKeepTheirOwnVersions() throws SQLException {
        DataSource db = SqliteDataSource.file(dir.resolve("m.db"));
        migrations("jdbc_a", twoSteps("jdbc_mig_a")).apply(db);

        assertThat(migrations("jdbc_b", threeSteps("jdbc_mig_b")).apply(db)).isEqualTo(3);
        try (Connection c = db.getConnection()) {
            assertThat(migrations("jdbc_a", List.of()).currentVersion(c)).isEqualTo(2);
        }
    }

    @Test
    void aFailingStepIsRolledBackAndLeavesTheVersionBeforeIt() throws SQLException {
        DataSource db = SqliteDataSource.file(dir.resolve("m.db"));
        List<Function<Dialect, List<String>>> broken = new ArrayList<>(twoSteps("jdbc_mig"));
        broken.add(dialect -> List.of("INSERT INTO jdbc_mig VALUES (3, 'x')", "THIS IS NOT SQL"));

        assertThatThrownBy(() -> migrations(COMPONENT, broken).apply(db)).isInstanceOf(SQLException.class);

        assertThat(count(db, "SELECT count(*) FROM jdbc_mig")).isEqualTo(1);
        try (Connection c = db.getConnection()) {
            assertThat(migrations(COMPONENT, List.of()).currentVersion(c)).isEqualTo(2);
        }
    }

    @Test
    void rejectsABlankComponent() {
        DataSource db = SqliteDataSource.file(dir.resolve("m.db"));
        assertThatThrownBy(() -> SchemaMigrations.builder(" "))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("component");
    }

    @Test
    void migratesMariaDbOnceAndIdempotently() throws SQLException {
        DataSource db = TestDatabases.mariadb();
        // names of this run's own: other builds on the machine use the same database at once
        String run = UUID.randomUUID().toString().substring(0, 8);
        String component = "jdbc_migrations_maria_" + run;
        String table = "jdbc_mig_maria_" + run;
        reset(db, component, "DROP TABLE IF EXISTS " + table);
        try {
            assertThat(migrations(component, twoSteps(table)).apply(db)).isEqualTo(2);
            assertThat(migrations(component, threeSteps(table)).apply(db)).isEqualTo(3);
            assertThat(migrations(component, threeSteps(table)).apply(db)).isEqualTo(3);

            assertThat(count(db, "SELECT count(*) FROM " + table)).isEqualTo(2);
            assertThat(count(db, "SELECT count(*) FROM " + table + " WHERE note = 'MARIADB'")).isEqualTo(1);
        } finally {
            reset(db, component, "DROP TABLE IF EXISTS " + table);
        }
    }

    @Test
    void serversStartingTogetherOnPostgresqlRunEachStepExactlyOnce() throws Exception {
        DataSource admin = TestDatabases.postgres();
        // a schema of our own, so the version table itself is created concurrently too; named per run because
        // other builds on the machine use the same database at once
        String schema = "jdbc_migrations_" + UUID.randomUUID().toString().substring(0, 8);
        try (Connection c = admin.getConnection(); Statement s = c.createStatement()) {
            s.execute("CREATE SCHEMA " + schema);
        }
        DataSource db = new TrackingDataSource(admin, "SET search_path TO " + schema);
        int servers = 6;
        CyclicBarrier start = new CyclicBarrier(servers);
        ExecutorService pool = Executors.newFixedThreadPool(servers);
        try {
            List<Future<Integer>> versions = new ArrayList<>();
            for (int i = 0; i < servers; i++) {
                versions.add(pool.submit(() -> {
                    start.await(10, TimeUnit.SECONDS);
                    return migrations(COMPONENT, threeSteps("jdbc_mig_pg")).apply(db);
                }));
            }
            for (Future<Integer> version : versions) {
                assertThat(version.get(30, TimeUnit.SECONDS)).isEqualTo(3);
            }
        } finally {
            pool.shutdownNow();
        }

        assertThat(count(db, "SELECT count(*) FROM jdbc_mig_pg")).isEqualTo(2);
        assertThat(count(db, "SELECT count(*) FROM jdbc_mig_pg WHERE note = 'POSTGRESQL'")).isEqualTo(1);
        try (Connection c = admin.getConnection(); Statement s = c.createStatement()) {
            s.execute("DROP SCHEMA " + schema + " CASCADE");
        }
    }

    private static SchemaMigrations prefixed(String prefix, String table, List<Function<Dialect, List<String>>> steps) {
        return SchemaMigrations.builder(COMPONENT)
                .storeOptions(StoreOptions.builder().tablePrefix(prefix).build()).table(table).steps(steps).build();
    }

    private static boolean sqliteTable(DataSource db, String name) throws SQLException {
        return count(db, "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = '" + name + "'") == 1;
    }

    @Test
    void aTablePrefixCoversTheVersionTableToo() throws SQLException {
        DataSource db = SqliteDataSource.file(dir.resolve("m.db"));

        assertThat(prefixed("x_", "x_mig", twoSteps("x_mig")).apply(db)).isEqualTo(2);

        assertThat(sqliteTable(db, "x_schema_version")).isTrue();
        assertThat(sqliteTable(db, "stagger_schema_version")).isFalse();
        assertThat(count(db, "SELECT version FROM x_schema_version WHERE component = '" + COMPONENT + "'")).isEqualTo(2);
    }

    @Test
    void aComponentAnEarlierReleaseRecordedInTheSharedVersionTableIsRecognisedAndNotCreatedAgain() throws SQLException {
        DataSource db = SqliteDataSource.file(dir.resolve("m.db"));
        // what releases before prefixed version tables did for tablePrefix("x_"): stagger_schema_version
        migrations(COMPONENT, twoSteps("x_mig")).apply(db);

        assertThat(prefixed("x_", "x_mig", threeSteps("x_mig")).apply(db)).isEqualTo(3);

        assertThat(count(db, "SELECT count(*) FROM x_mig")).as("step 2's seed ran once, step 3 once").isEqualTo(2);
        assertThat(count(db, "SELECT version FROM x_schema_version WHERE component = '" + COMPONENT + "'")).isEqualTo(3);
        assertThat(count(db, "SELECT version FROM stagger_schema_version WHERE component = '" + COMPONENT + "'"))
                .as("left for older servers still running").isEqualTo(2);
        assertThat(prefixed("x_", "x_mig", threeSteps("x_mig")).apply(db)).isEqualTo(3);
    }

    @Test
    void validateChangesNothingAndNamesTheMissingTablesAndTheDatabase() throws SQLException {
        DataSource db = SqliteDataSource.file(dir.resolve("empty.db"));

        assertThatThrownBy(() -> prefixed("x_", "x_mig", twoSteps("x_mig")).validate(db))
                .isInstanceOfSatisfying(SchemaNotReadyException.class, e -> {
                    assertThat(e.missingTables()).containsExactly("x_schema_version", "x_mig");
                    assertThat(e.version()).isZero();
                    assertThat(e.requiredVersion()).isEqualTo(2);
                    assertThat(e.getMessage()).contains(COMPONENT).contains("empty.db")
                            .contains("x_schema_version").contains("x_mig");
                });
        assertThat(sqliteTable(db, "x_schema_version")).as("validate writes nothing").isFalse();
    }

    @Test
    void validatePassesOnceTheSchemaIsInPlace() throws SQLException {
        DataSource db = SqliteDataSource.file(dir.resolve("m.db"));
        prefixed("x_", "x_mig", twoSteps("x_mig")).apply(db);

        assertThat(prefixed("x_", "x_mig", twoSteps("x_mig")).validate(db)).isEqualTo(2);
        assertThat(prefixed("x_", "x_mig", twoSteps("x_mig")).prepare(db, SchemaMode.VALIDATE)).isEqualTo(2);
    }

    @Test
    void validateRefusesASchemaOlderThanTheRelease() throws SQLException {
        DataSource db = SqliteDataSource.file(dir.resolve("m.db"));
        prefixed("x_", "x_mig", twoSteps("x_mig")).apply(db);

        assertThatThrownBy(() -> prefixed("x_", "x_mig", threeSteps("x_mig")).validate(db))
                .isInstanceOf(SchemaNotReadyException.class)
                .hasMessageContaining("recorded version 2, this release needs 3");
        assertThat(count(db, "SELECT count(*) FROM x_mig")).as("step 3 did not run").isEqualTo(1);
    }

    @Test
    void validateAcceptsAVersionAnEarlierReleaseRecordedInTheSharedVersionTable() throws SQLException {
        DataSource db = SqliteDataSource.file(dir.resolve("m.db"));
        migrations(COMPONENT, twoSteps("x_mig")).apply(db);

        assertThat(prefixed("x_", "x_mig", twoSteps("x_mig")).validate(db)).isEqualTo(2);
        assertThat(sqliteTable(db, "x_schema_version")).as("validate writes nothing").isFalse();
    }

    @Test
    void tablesThatExistWithoutARecordedVersionAreRefusedRatherThanCreatedAgain() throws SQLException {
        DataSource db = SqliteDataSource.file(dir.resolve("m.db"));
        try (Connection c = db.getConnection(); Statement s = c.createStatement()) {
            s.execute("CREATE TABLE x_mig (id INT PRIMARY KEY, note VARCHAR(50))");
        }

        assertThatThrownBy(() -> prefixed("x_", "x_mig", twoSteps("x_mig")).apply(db))
                .isInstanceOf(SchemaNotReadyException.class)
                .hasMessageContaining("x_mig").hasMessageContaining("no version is recorded");
    }

    @Test
    void theScriptOfEveryStepAppliedByHandGivesASchemaTheMigratorAccepts() throws SQLException {
        DataSource db = SqliteDataSource.file(dir.resolve("m.db"));
        SchemaMigrations definition = prefixed("x_", "x_mig", threeSteps("x_mig"));

        runScript(db, definition.script(Dialect.SQLITE));

        assertThat(definition.validate(db)).isEqualTo(3);
        assertThat(definition.apply(db)).isEqualTo(3);
        assertThat(count(db, "SELECT count(*) FROM x_mig")).as("no step ran twice").isEqualTo(2);
        assertThat(definition.script(Dialect.SQLITE, 1)).startsWith("-- " + COMPONENT + ": schema version 1, SQLITE\n")
                .contains("CREATE TABLE IF NOT EXISTS x_schema_version")
                .endsWith("INSERT INTO x_schema_version (component, version) VALUES ('" + COMPONENT + "', 1);\n");
        assertThatThrownBy(() -> definition.script(Dialect.SQLITE, 4)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("version must be 1..3, got 4");
    }

    @Test
    void onPostgresqlASchemaHoldsTheVersionTableAndTheTablesAndIsCreatedWhenMissing() throws SQLException {
        DataSource db = TestDatabases.postgres();
        String schema = "jdbc_schema_" + UUID.randomUUID().toString().substring(0, 8);
        SchemaMigrations definition = SchemaMigrations.builder(COMPONENT)
                .storeOptions(StoreOptions.builder().schema(schema).tablePrefix("x_").build())
                .table("x_mig").steps(threeSteps(schema + ".x_mig")).build();
        try {
            assertThatThrownBy(() -> definition.validate(db)).isInstanceOf(SchemaNotReadyException.class)
                    .hasMessageContaining(schema + ".x_schema_version").hasMessageContaining(schema + ".x_mig");

            assertThat(definition.apply(db)).isEqualTo(3);

            assertThat(count(db, "SELECT count(*) FROM " + schema + ".x_mig")).isEqualTo(2);
            assertThat(count(db, "SELECT version FROM " + schema + ".x_schema_version")).isEqualTo(3);
            assertThat(definition.validate(db)).isEqualTo(3);
        } finally {
            try (Connection c = db.getConnection(); Statement s = c.createStatement()) {
                s.execute("DROP SCHEMA IF EXISTS " + schema + " CASCADE");
            }
        }
    }

    @Test
    void onPostgresqlTheScriptAppliedByHandGivesASchemaTheMigratorAccepts() throws SQLException {
        DataSource db = TestDatabases.postgres();
        String schema = "jdbc_script_" + UUID.randomUUID().toString().substring(0, 8);
        SchemaMigrations definition = SchemaMigrations.builder(COMPONENT)
                .storeOptions(StoreOptions.builder().schema(schema).tablePrefix("x_").build())
                .table("x_mig").steps(threeSteps(schema + ".x_mig")).build();
        try {
            runScript(db, definition.script(Dialect.POSTGRESQL));

            assertThat(definition.validate(db)).isEqualTo(3);
            assertThat(definition.apply(db)).isEqualTo(3);
            assertThat(count(db, "SELECT count(*) FROM " + schema + ".x_mig")).isEqualTo(2);
        } finally {
            try (Connection c = db.getConnection(); Statement s = c.createStatement()) {
                s.execute("DROP SCHEMA IF EXISTS " + schema + " CASCADE");
            }
        }
    }

    @Test
    void aSchemaIsRefusedOnDatabasesOtherThanPostgresql() {
        DataSource db = SqliteDataSource.file(dir.resolve("m.db"));

        assertThatThrownBy(() -> SchemaMigrations.builder(COMPONENT)
                .storeOptions(StoreOptions.builder().schema("app").build()).build().apply(db))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("schema").hasMessageContaining("SQLITE");
        assertThatThrownBy(() -> StoreOptions.builder().schema("App; DROP"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("schema must match");
    }

    /** Runs a script as a migration tool would: statement by statement, in one transaction. */
    private static void runScript(DataSource db, String script) throws SQLException {
        try (Connection c = db.getConnection(); Statement s = c.createStatement()) {
            c.setAutoCommit(false);
            for (String statement : script.split(";\n")) {
                String sql = statement.lines().filter(l -> !l.startsWith("--")).reduce("", (a, b) -> a + b + "\n").trim();
                if (!sql.isEmpty()) {
                    s.execute(sql);
                }
            }
            c.commit();
        }
    }

    private static void reset(DataSource db, String component, String dropTable) throws SQLException {
        try (Connection c = db.getConnection(); Statement s = c.createStatement()) {
            s.execute(dropTable);
            s.execute("CREATE TABLE IF NOT EXISTS stagger_schema_version ("
                    + "component VARCHAR(100) PRIMARY KEY, version INTEGER NOT NULL)");
            s.execute("DELETE FROM stagger_schema_version WHERE component = '" + component + "'");
        }
    }

    private static long count(DataSource db, String sql) throws SQLException {
        try (Connection c = db.getConnection(); Statement s = c.createStatement(); ResultSet rs = s.executeQuery(sql)) {
            rs.next();
            return rs.getLong(1);
        }
    }
}
