package dev.stagger.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.stagger.Clock;
import dev.stagger.testing.VirtualClock;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class StoreOptionsTest {

    @Test
    void theDefaultsAreThePrefixStaggerNoSchemaTheSystemClockAndMigrate() {
        StoreOptions o = StoreOptions.defaults();
        assertThat(o.tablePrefix()).isEqualTo("stagger_").isEqualTo(StoreOptions.DEFAULT_TABLE_PREFIX);
        assertThat(o.schema()).isEmpty();
        assertThat(o.clock()).isSameAs(Clock.system());
        assertThat(o.databaseClock()).isEmpty();
        assertThat(o.schemaMode()).isEqualTo(SchemaMode.MIGRATE);
    }

    @Test
    void eachSetterReturnsNewOptionsAndLeavesTheOldOnesAlone() {
        VirtualClock clock = new VirtualClock();
        StoreOptions shop = StoreOptions.defaults().tablePrefix("shop_").schema("billing").clock(clock)
                .databaseClock(false).schemaMode(SchemaMode.VALIDATE);
        assertThat(shop.tablePrefix()).isEqualTo("shop_");
        assertThat(shop.schema()).contains("billing");
        assertThat(shop.clock()).isSameAs(clock);
        assertThat(shop.databaseClock()).contains(false);
        assertThat(shop.schemaMode()).isEqualTo(SchemaMode.VALIDATE);
        assertThat(StoreOptions.defaults().tablePrefix()).isEqualTo("stagger_");
    }

    @Test
    void aTableIsThePrefixAndTheNameQualifiedByTheSchemaWhenOneIsSet() {
        assertThat(StoreOptions.defaults().qualifiedTable("jobs")).isEqualTo("stagger_jobs");
        assertThat(StoreOptions.defaults().tablePrefix("shop_").schema("billing").qualifiedTable("inbox"))
                .isEqualTo("billing.shop_inbox");
    }

    @Test
    void theDatabaseClockIsUsedOnPostgresqlAndNotOnSqliteUnlessSet() {
        StoreOptions defaults = StoreOptions.defaults();
        assertThat(defaults.usesDatabaseClock(Database.POSTGRESQL)).isTrue();
        assertThat(defaults.usesDatabaseClock(Database.SQLITE)).isFalse();
        assertThat(defaults.databaseClock(false).usesDatabaseClock(Database.POSTGRESQL)).isFalse();
        assertThat(defaults.databaseClock(true).usesDatabaseClock(Database.SQLITE)).isTrue();
    }

    @ParameterizedTest
    @ValueSource(strings = {"Shop_", "1shop_", "_shop", "shop-", "shop.", "keys; DROP TABLE users", "", "a_b c"})
    void aTablePrefixThatIsNotPlainIsRefusedNamingTheFieldAndTheValue(String prefix) {
        assertThatThrownBy(() -> StoreOptions.defaults().tablePrefix(prefix))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("tablePrefix must match [a-z][a-z0-9_]{0,40}, got '" + prefix + "'");
    }

    @Test
    void aTablePrefixLongerThan41CharactersIsRefusedWithACappedEcho() {
        assertThat(StoreOptions.defaults().tablePrefix("p" + "_".repeat(40)).tablePrefix()).hasSize(41);
        assertThatThrownBy(() -> StoreOptions.defaults().tablePrefix("p" + "_".repeat(41)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("tablePrefix");
        assertThatThrownBy(() -> StoreOptions.defaults().tablePrefix("x".repeat(10_000)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("tablePrefix")
                .hasMessageContaining("(10000 characters)").message().hasSizeLessThan(200);
    }

    @Test
    void aNullTablePrefixIsRefusedNamingTheField() {
        assertThatThrownBy(() -> StoreOptions.defaults().tablePrefix(null))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("tablePrefix must match [a-z][a-z0-9_]{0,40}, got null");
    }

    @ParameterizedTest
    @ValueSource(strings = {"Billing", "9billing", "billing.x", "app; DROP", ""})
    void aSchemaThatIsNotPlainIsRefusedNamingTheFieldAndTheValue(String schema) {
        assertThatThrownBy(() -> StoreOptions.defaults().schema(schema))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("schema must match [a-z_][a-z0-9_]{0,62}, got '" + schema + "'");
    }

    @Test
    void aMissingClockOrSchemaModeIsRefusedNamingTheField() {
        assertThatThrownBy(() -> StoreOptions.defaults().clock(null))
                .isInstanceOf(NullPointerException.class).hasMessage("clock must not be null");
        assertThatThrownBy(() -> StoreOptions.defaults().schemaMode(null))
                .isInstanceOf(NullPointerException.class).hasMessage("schemaMode must not be null");
    }
}
