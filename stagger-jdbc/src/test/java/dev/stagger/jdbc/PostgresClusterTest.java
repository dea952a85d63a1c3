package dev.stagger.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.stagger.testsupport.jdbc.PostgresCluster;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;

/** The test helper that gives a test a PostgreSQL server of its own to stop and start. */
class PostgresClusterTest {

    private static String query(DataSource ds, String sql) throws SQLException {
        try (Connection c = ds.getConnection(); Statement s = c.createStatement(); ResultSet rs = s.executeQuery(sql)) {
            rs.next();
            return rs.getString(1);
        }
    }

    @Test
    void aClusterOfItsOwnStopsStartsAndRestartsKeepingItsDataAndIsDeletedOnClose() throws Exception {
        Path dir;
        try (PostgresCluster pg = PostgresCluster.start(Path.of("target/pg-clusters"))) {
            assertThat(pg.port()).isNotEqualTo(5432);
            DataSource ds = pg.dataSource("connectTimeout=2");
            try (Connection c = ds.getConnection(); Statement s = c.createStatement()) {
                s.execute("CREATE TABLE kept (v TEXT)");
                s.execute("INSERT INTO kept VALUES ('before the restart')");
            }
            dir = Path.of(query(ds, "SHOW data_directory")).getParent();

            pg.stop();
            assertThat(pg.running()).isFalse();
            assertThatThrownBy(() -> query(ds, "SELECT 1")).isInstanceOf(SQLException.class);

            pg.start();
            assertThat(query(ds, "SELECT v FROM kept")).isEqualTo("before the restart");

            pg.restart();
            assertThat(pg.awaitAccepting(10_000)).isTrue();
            assertThat(query(ds, "SELECT count(*) FROM kept")).isEqualTo("1");
            assertThat(dir).startsWith(Path.of("target/pg-clusters").toAbsolutePath());
        }
        assertThat(Files.exists(dir)).as("deleted on close").isFalse();
    }
}
