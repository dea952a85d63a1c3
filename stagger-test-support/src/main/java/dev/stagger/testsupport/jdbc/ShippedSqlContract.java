package dev.stagger.testsupport.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import java.util.UUID;
import java.util.stream.Stream;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The plain SQL files a SQL store ships for migration tools
 * ({@code src/main/resources/dev/stagger/<component>/sql/<postgresql|sqlite>/V<n>__stagger_<component>.sql})
 * are the store's own schema definition rendered as SQL: a subclass names the component and renders
 * the definition, and these tests fail when the files drift from it, or when a PostgreSQL schema set
 * up from them is refused by the store in its no-change mode. After changing the schema, regenerate
 * the files with {@code -Dstagger.sql.write=true} (then run again: the copies on the class path are
 * checked too) and review the diff.
 */
public abstract class ShippedSqlContract {
    /** The databases files are shipped for, as their folders are named. */
    protected static final List<String> FOLDERS = List.of("postgresql", "sqlite");

    @TempDir
    protected Path dir;

    /** {@code jobs}, {@code idempotency}: the resource folder {@code dev/stagger/<component>/sql}. */
    protected abstract String component();

    /** The schema version the store's definition reaches. */
    protected abstract int latestVersion();

    /** The definition's script taking {@code folder}'s database from {@code version - 1} to {@code version}. */
    protected abstract String script(String folder, int version);

    /** Uses a store built on {@code db} that may not change the schema (and fails if it refuses the schema). */
    protected abstract void useAStoreThatNeverChangesTheSchema(DataSource db) throws Exception;

    private Path sources() {
        return Path.of("src/main/resources/dev/stagger/" + component() + "/sql");
    }

    private String fileName(int version) {
        return "V" + version + "__stagger_" + component() + ".sql";
    }

    @Test
    void everyShippedFileIsExactlyWhatTheStoreApplies() throws IOException {
        boolean write = Boolean.getBoolean("stagger.sql.write");
        for (String folder : FOLDERS) {
            for (int v = 1; v <= latestVersion(); v++) {
                Path file = sources().resolve(folder).resolve(fileName(v));
                String expected = script(folder, v);
                if (write) {
                    Files.createDirectories(file.getParent());
                    Files.writeString(file, expected);
                }
                assertThat(file).as("shipped for %s, version %d (regenerate with -Dstagger.sql.write=true)", folder, v)
                        .exists().hasContent(expected);
                try (InputStream in = getClass().getResourceAsStream("/dev/stagger/" + component() + "/sql/" + folder + "/"
                        + fileName(v))) {
                    assertThat(in).as("on the classpath, as it is in the jar").isNotNull();
                    assertThat(new String(in.readAllBytes(), StandardCharsets.UTF_8)).isEqualTo(expected);
                }
            }
            try (Stream<Path> files = Files.list(sources().resolve(folder))) {
                assertThat(files).as("no file for a version the store does not know").hasSize(latestVersion());
            }
        }
    }

    @Test
    void aPostgresqlDatabaseSetUpFromTheShippedSqlIsAcceptedByAStoreThatNeverChangesTheSchema() throws Exception {
        TestDataSource admin = TestDatabases.postgres();
        String schema = component() + "_sql_" + UUID.randomUUID().toString().substring(0, 8);
        exec(admin, "CREATE SCHEMA " + schema);
        try {
            // the files name no schema: as a migration tool runs them, against the connection's current schema
            DataSource db = new TestDataSource(admin.url() + (admin.url().contains("?") ? "&" : "?") + "currentSchema="
                    + schema, admin.user(), admin.password());
            runShipped(db, "postgresql");

            useAStoreThatNeverChangesTheSchema(db);
        } finally {
            exec(admin, "DROP SCHEMA " + schema + " CASCADE");
        }
    }

    /** Applies the files shipped for {@code folder} in version order, statement by statement, as a migration tool does. */
    protected void runShipped(DataSource db, String folder) throws IOException, SQLException {
        try (Stream<Path> files = Files.list(sources().resolve(folder))) {
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
