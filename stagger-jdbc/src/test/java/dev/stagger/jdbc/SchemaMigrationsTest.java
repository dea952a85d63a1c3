package dev.stagger.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.stagger.jdbc.testsupport.TestDatabases;
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

    private static List<Function<Dialect, List<String>>> threeSteps(String table) {
        List<Function<Dialect, List<String>>> steps = new ArrayList<>(twoSteps(table));
        steps.add(dialect -> List.of("INSERT INTO " + table + " VALUES (2, '" + dialect + "')"));
        return steps;
    }

    @Test
    void appliesEveryStepOnceAndRecordsTheVersion() throws SQLException {
        DataSource db = SqliteDataSource.file(dir.resolve("m.db"));

        assertThat(SchemaMigrations.apply(db, COMPONENT, twoSteps("jdbc_mig"))).isEqualTo(2);

        assertThat(count(db, "SELECT count(*) FROM jdbc_mig")).isEqualTo(1);
        try (Connection c = db.getConnection()) {
            assertThat(SchemaMigrations.currentVersion(c, COMPONENT)).isEqualTo(2);
            assertThat(SchemaMigrations.currentVersion(c, "jdbc_unknown_component")).isZero();
        }
    }

    @Test
    void applyingAgainChangesNothing() throws SQLException {
        DataSource db = SqliteDataSource.file(dir.resolve("m.db"));
        SchemaMigrations.apply(db, COMPONENT, twoSteps("jdbc_mig"));

        assertThat(SchemaMigrations.apply(db, COMPONENT, twoSteps("jdbc_mig"))).isEqualTo(2);
        assertThat(count(db, "SELECT count(*) FROM jdbc_mig")).isEqualTo(1);
    }

    @Test
    void aNewStepRunsOnlyThatStep() throws SQLException {
        DataSource db = SqliteDataSource.file(dir.resolve("m.db"));
        SchemaMigrations.apply(db, COMPONENT, twoSteps("jdbc_mig"));

        assertThat(SchemaMigrations.apply(db, COMPONENT, threeSteps("jdbc_mig"))).isEqualTo(3);
        assertThat(count(db, "SELECT count(*) FROM jdbc_mig")).isEqualTo(2);
        assertThat(count(db, "SELECT count(*) FROM jdbc_mig WHERE note = 'SQLITE'")).isEqualTo(1);
    }

    @Test
    void componentsKeepTheirOwnVersions() throws SQLException {
        DataSource db = SqliteDataSource.file(dir.resolve("m.db"));
        SchemaMigrations.apply(db, "jdbc_a", twoSteps("jdbc_mig_a"));

        assertThat(SchemaMigrations.apply(db, "jdbc_b", threeSteps("jdbc_mig_b"))).isEqualTo(3);
        try (Connection c = db.getConnection()) {
            assertThat(SchemaMigrations.currentVersion(c, "jdbc_a")).isEqualTo(2);
        }
    }

    @Test
    void aFailingStepIsRolledBackAndLeavesTheVersionBeforeIt() throws SQLException {
        DataSource db = SqliteDataSource.file(dir.resolve("m.db"));
        List<Function<Dialect, List<String>>> broken = new ArrayList<>(twoSteps("jdbc_mig"));
        broken.add(dialect -> List.of("INSERT INTO jdbc_mig VALUES (3, 'x')", "THIS IS NOT SQL"));

        assertThatThrownBy(() -> SchemaMigrations.apply(db, COMPONENT, broken)).isInstanceOf(SQLException.class);

        assertThat(count(db, "SELECT count(*) FROM jdbc_mig")).isEqualTo(1);
        try (Connection c = db.getConnection()) {
            assertThat(SchemaMigrations.currentVersion(c, COMPONENT)).isEqualTo(2);
        }
    }

    @Test
    void rejectsABlankComponent() {
        DataSource db = SqliteDataSource.file(dir.resolve("m.db"));
        assertThatThrownBy(() -> SchemaMigrations.apply(db, " ", List.of()))
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
            assertThat(SchemaMigrations.apply(db, component, twoSteps(table))).isEqualTo(2);
            assertThat(SchemaMigrations.apply(db, component, threeSteps(table))).isEqualTo(3);
            assertThat(SchemaMigrations.apply(db, component, threeSteps(table))).isEqualTo(3);

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
                    return SchemaMigrations.apply(db, COMPONENT, threeSteps("jdbc_mig_pg"));
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
