package dev.stagger.inbox;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.stagger.jdbc.Database;
import dev.stagger.jdbc.SchemaMode;
import dev.stagger.jdbc.SchemaNotReadyException;
import dev.stagger.jdbc.SqliteDataSource;
import dev.stagger.jdbc.StoreOptions;
import dev.stagger.testing.VirtualClock;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The inbox takes the store options every Stagger store takes, under the same names. */
class InboxStoreOptionsTest {
    @TempDir
    Path dir;

    private DataSource db() {
        return SqliteDataSource.file(dir.resolve("inbox.db"));
    }

    @Test
    void theTableIsThePrefixFollowedByInbox() {
        assertThat(Inbox.builder("billing", db()).build().tableName()).isEqualTo(Inbox.DEFAULT_TABLE)
                .isEqualTo("stagger_inbox");
        assertThat(Inbox.builder("billing", db()).tablePrefix("shop_").build().tableName()).isEqualTo("shop_inbox");
    }

    @Test
    void aTablePrefixThatIsNotPlainIsRefusedNamingTheFieldAndTheValue() {
        assertThatThrownBy(() -> Inbox.builder("billing", db()).tablePrefix("Shop-Inbox"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("tablePrefix must match [a-z][a-z0-9_]{0,40}, got 'Shop-Inbox'");
    }

    @Test
    void optionsGivenAtOnceSetThePrefixAndTheClock() throws SQLException {
        VirtualClock clock = new VirtualClock();
        DataSource db = db();
        StoreOptions shop = StoreOptions.builder().tablePrefix("shop_").clock(clock).build();
        Inbox inbox = Inbox.builder("billing", db).storeOptions(shop).expiry(Duration.ofHours(1)).build();
        try (Connection c = db.getConnection()) {
            inbox.record(c, "k");
        }
        assertThat(inbox.tableName()).isEqualTo("shop_inbox");
        assertThat(inbox.purgeExpired(10)).isZero();
        clock.advance(Duration.ofHours(1));
        assertThat(inbox.purgeExpired(10)).as("expired by the options' clock").isEqualTo(1);
    }

    @Test
    void optionsAskingForTheDatabaseClockAreRefused() {
        StoreOptions databaseClock = StoreOptions.builder().databaseClock(true).build();
        assertThatThrownBy(() -> Inbox.builder("billing", db()).storeOptions(databaseClock))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("databaseClock is not supported by the inbox, got true");
        StoreOptions storeClock = StoreOptions.builder().databaseClock(false).build();
        assertThat(Inbox.builder("billing", db()).storeOptions(storeClock).build().tableName()).isEqualTo("stagger_inbox");
    }

    @Test
    void aSetterAfterTheOptionsChangesThatOptionOnly() {
        StoreOptions shop = StoreOptions.builder().tablePrefix("shop_").schemaMode(SchemaMode.VALIDATE).build();
        assertThat(Inbox.builder("billing", db()).storeOptions(shop).schemaMode(SchemaMode.MIGRATE).build().tableName())
                .isEqualTo("shop_inbox");
    }

    @Test
    void aSchemaIsRefusedOnSqlite() {
        assertThatThrownBy(() -> Inbox.builder("billing", db()).schema("app").build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("schema is supported on PostgreSQL only, got SQLITE");
    }

    @Test
    void anInboxThatMayNotChangeTheSchemaRefusesAnEmptyDatabaseNamingTheTables() {
        assertThatThrownBy(() -> Inbox.builder("billing", db()).tablePrefix("shop_").schemaMode(SchemaMode.VALIDATE).build())
                .isInstanceOfSatisfying(SchemaNotReadyException.class, e ->
                        assertThat(e.missingTables()).containsExactly("shop_schema_version", "shop_inbox"));
    }

    @Test
    void anInboxThatMayNotChangeTheSchemaAcceptsTheTablesOfItsScript() throws SQLException {
        DataSource db = db();
        String script = Inbox.builder("billing", db).tablePrefix("shop_").schemaScript(Database.SQLITE);
        try (Connection c = db.getConnection(); Statement s = c.createStatement()) {
            for (String statement : script.replaceAll("(?m)^--.*$", "").split(";")) {
                if (!statement.isBlank()) {
                    s.execute(statement);
                }
            }
        }

        Inbox inbox = Inbox.builder("billing", db).tablePrefix("shop_").schemaMode(SchemaMode.VALIDATE).build();

        try (Connection c = db.getConnection()) {
            assertThat(inbox.record(c, "k")).isTrue();
        }
    }
}
