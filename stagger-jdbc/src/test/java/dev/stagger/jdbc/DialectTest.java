package dev.stagger.jdbc;

import dev.stagger.jdbc.internal.Dialect;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.stagger.testsupport.jdbc.TestDatabases;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import java.util.UUID;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class DialectTest {
    private static final List<String> COLUMNS = List.of("id", "name", "hits");
    private static final List<String> KEY = List.of("id");

    @TempDir
    Path dir;

    @Test
    void detectsSqlite() throws SQLException {
        assertThat(Dialect.of(SqliteDataSource.file(dir.resolve("d.db")))).isEqualTo(Dialect.SQLITE);
    }

    @Test
    void detectsPostgresql() throws SQLException {
        assertThat(Dialect.of(TestDatabases.postgres())).isEqualTo(Dialect.POSTGRESQL);
    }

    @Test
    void detectsMariaDb() throws SQLException {
        assertThat(Dialect.of(TestDatabases.mariadb())).isEqualTo(Dialect.MARIADB);
    }

    @Test
    void skipLockedIsOfferedWhereTheDatabaseHasIt() {
        assertThat(Dialect.POSTGRESQL.supportsSkipLocked()).isTrue();
        assertThat(Dialect.MARIADB.supportsSkipLocked()).isTrue();
        assertThat(Dialect.SQLITE.supportsSkipLocked()).isFalse();
    }

    @Test
    void insertIfAbsentAndUpsertWorkOnSqlite() throws SQLException {
        exerciseInsertIfAbsentAndUpsert(SqliteDataSource.file(dir.resolve("d.db")), uniqueTable());
    }

    @Test
    void insertIfAbsentAndUpsertWorkOnPostgresql() throws SQLException {
        exerciseInsertIfAbsentAndUpsert(TestDatabases.postgres(), uniqueTable());
    }

    @Test
    void insertIfAbsentAndUpsertWorkOnMariaDb() throws SQLException {
        exerciseInsertIfAbsentAndUpsert(TestDatabases.mariadb(), uniqueTable());
    }

    /** Other builds on the machine use the same databases at the same time. */
    private static String uniqueTable() {
        return "jdbc_dialect_items_" + UUID.randomUUID().toString().substring(0, 8);
    }

    private static void exerciseInsertIfAbsentAndUpsert(DataSource db, String table) throws SQLException {
        try (Connection c = db.getConnection()) {
            Dialect dialect = Dialect.of(c);
            try (Statement s = c.createStatement()) {
                s.execute("DROP TABLE IF EXISTS " + table);
                s.execute("CREATE TABLE " + table + " (id INT PRIMARY KEY, name VARCHAR(20) NOT NULL, hits INT NOT NULL)");
            }
            String insertIfAbsent = dialect.insertIfAbsent(table, COLUMNS, KEY);
            String upsert = dialect.upsert(table, COLUMNS, KEY);

            assertThat(execute(c, insertIfAbsent, 1, "first", 1)).as("inserted").isEqualTo(1);
            assertThat(execute(c, insertIfAbsent, 1, "second", 2)).as("already there").isZero();
            assertThat(row(c, table)).isEqualTo("first 1");

            execute(c, upsert, 1, "third", 3);
            assertThat(row(c, table)).isEqualTo("third 3");
            execute(c, upsert, 2, "new", 1);
            try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery("SELECT count(*) FROM " + table)) {
                rs.next();
                assertThat(rs.getInt(1)).isEqualTo(2);
            }
            try (Statement s = c.createStatement()) {
                s.execute("DROP TABLE " + table);
            }
        }
    }

    private static int execute(Connection c, String sql, int id, String name, int hits) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(sql)) {
            ps.setInt(1, id);
            ps.setString(2, name);
            ps.setInt(3, hits);
            return ps.executeUpdate();
        }
    }

    private static String row(Connection c, String table) throws SQLException {
        try (Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT name, hits FROM " + table + " WHERE id = 1")) {
            rs.next();
            return rs.getString(1) + " " + rs.getInt(2);
        }
    }

    @Test
    void anUpsertWithOnlyKeyColumnsIsAnInsertIfAbsent() {
        assertThat(Dialect.POSTGRESQL.upsert("t", List.of("id"), List.of("id")))
                .isEqualTo(Dialect.POSTGRESQL.insertIfAbsent("t", List.of("id"), List.of("id")));
    }

    @Test
    void refusesNamesThatAreNotPlainIdentifiers() {
        assertThatThrownBy(() -> Dialect.POSTGRESQL.insertIfAbsent("t; DROP TABLE x", COLUMNS, KEY))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("table");
        assertThatThrownBy(() -> Dialect.SQLITE.upsert("t", List.of("id", "na me"), KEY))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("columns");
        assertThatThrownBy(() -> Dialect.MARIADB.upsert("t", COLUMNS, List.of("other")))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("keyColumns");
        assertThatThrownBy(() -> Dialect.MARIADB.upsert("t", List.of(), KEY))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("columns");
    }

    @Test
    void theDatabaseClockReadsEpochMillisecondsOnSqlite() throws SQLException {
        assertDatabaseClock(SqliteDataSource.file(dir.resolve("d.db")));
    }

    @Test
    void theDatabaseClockReadsEpochMillisecondsOnPostgresql() throws SQLException {
        assertDatabaseClock(TestDatabases.postgres());
    }

    @Test
    void theDatabaseClockReadsEpochMillisecondsOnMariaDb() throws SQLException {
        assertDatabaseClock(TestDatabases.mariadb());
    }

    /** The servers here run on this machine, so their clock is this JVM's, give or take scheduling. */
    private static void assertDatabaseClock(DataSource db) throws SQLException {
        try (Connection c = db.getConnection(); Statement s = c.createStatement()) {
            String now = Dialect.of(c).epochMillisNow();
            long before = System.currentTimeMillis();
            try (ResultSet rs = s.executeQuery("SELECT " + now + ", " + now)) {
                long after = System.currentTimeMillis();
                rs.next();
                assertThat(rs.getLong(1)).as("one value per statement").isEqualTo(rs.getLong(2))
                        .isBetween(before - 60_000, after + 60_000);
            }
        }
    }

    @Test
    void anInsertIfAbsentTakesAnExpressionPerColumn() {
        assertThat(Dialect.POSTGRESQL.insertIfAbsent("app.t", COLUMNS, List.of("?", "'x'", "1 + ?"), KEY))
                .isEqualTo("INSERT INTO app.t (id, name, hits) VALUES (?, 'x', 1 + ?) ON CONFLICT (id) DO NOTHING");
        assertThatThrownBy(() -> Dialect.SQLITE.insertIfAbsent("t", COLUMNS, List.of("?"), KEY))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("values");
    }

    @Test
    void hasNoHelperSqlForDialectsItCannotTest() {
        assertThatThrownBy(() -> Dialect.OTHER.insertIfAbsent("t", COLUMNS, KEY))
                .isInstanceOf(UnsupportedOperationException.class);
        assertThatThrownBy(() -> Dialect.H2.upsert("t", COLUMNS, KEY))
                .isInstanceOf(UnsupportedOperationException.class);
    }
}
