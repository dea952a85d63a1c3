package dev.stagger.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SqliteDataSourceTest {
    @TempDir
    Path dir;

    @Test
    void everyConnectionUsesWalNormalSyncForeignKeysAndTheBusyTimeout() throws SQLException {
        SqliteDataSource db = SqliteDataSource.file(dir.resolve("p.db"), Duration.ofMillis(1234));
        try (Connection c = db.getConnection()) {
            assertThat(pragma(c, "journal_mode")).isEqualTo("wal");
            assertThat(pragma(c, "busy_timeout")).isEqualTo("1234");
            assertThat(pragma(c, "synchronous")).isEqualTo("1"); // NORMAL
            assertThat(pragma(c, "foreign_keys")).isEqualTo("1");
        }
    }

    @Test
    void theDefaultBusyTimeoutIsFiveSeconds() throws SQLException {
        try (Connection c = SqliteDataSource.file(dir.resolve("p.db")).getConnection()) {
            assertThat(pragma(c, "busy_timeout")).isEqualTo("5000");
        }
    }

    @Test
    void foreignKeysAreEnforced() throws SQLException {
        try (Connection c = SqliteDataSource.file(dir.resolve("p.db")).getConnection(); Statement s = c.createStatement()) {
            s.execute("CREATE TABLE jdbc_parent (id INTEGER PRIMARY KEY)");
            s.execute("CREATE TABLE jdbc_child (id INTEGER PRIMARY KEY, parent INTEGER REFERENCES jdbc_parent(id))");
            assertThatThrownBy(() -> s.execute("INSERT INTO jdbc_child VALUES (1, 42)"))
                    .isInstanceOf(SQLException.class).hasMessageContaining("FOREIGN KEY");
        }
    }

    @Test
    void createsMissingParentDirectories() throws SQLException {
        Path file = dir.resolve("a/b/c/p.db");
        try (Connection c = SqliteDataSource.file(file).getConnection()) {
            assertThat(c.isValid(1)).isTrue();
        }
        assertThat(Files.exists(file)).isTrue();
    }

    @Test
    void rejectsANegativeBusyTimeoutAndAMissingFile() {
        assertThatThrownBy(() -> SqliteDataSource.file(dir.resolve("p.db"), Duration.ofMillis(-1)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("busyTimeout");
        assertThatThrownBy(() -> SqliteDataSource.file(null))
                .isInstanceOf(NullPointerException.class).hasMessageContaining("file");
    }

    private static String pragma(Connection c, String name) throws SQLException {
        try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery("PRAGMA " + name)) {
            rs.next();
            return rs.getString(1);
        }
    }
}
