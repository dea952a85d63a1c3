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
    void theBuilderSetsEachOptionAndBuiltOptionsNeverChange() {
        VirtualClock clock = new VirtualClock();
        StoreOptions.Builder b = StoreOptions.builder().tablePrefix("shop_").schema("billing").clock(clock)
                .databaseClock(false).schemaMode(SchemaMode.VALIDATE);
        StoreOptions shop = b.build();
        b.tablePrefix("other_");
        assertThat(shop.tablePrefix()).isEqualTo("shop_");
        assertThat(shop.schema()).contains("billing");
        assertThat(shop.clock()).isSameAs(clock);
        assertThat(shop.databaseClock()).contains(false);
        assertThat(shop.schemaMode()).isEqualTo(SchemaMode.VALIDATE);
        assertThat(StoreOptions.defaults().tablePrefix()).isEqualTo("stagger_");
    }

    @Test
    void toBuilderKeepsEveryOptionNotChanged() {
        StoreOptions shop = StoreOptions.builder().tablePrefix("shop_").schema("billing").databaseClock(true).build();
        StoreOptions validating = shop.toBuilder().schemaMode(SchemaMode.VALIDATE).build();
        assertThat(validating.tablePrefix()).isEqualTo("shop_");
        assertThat(validating.schema()).contains("billing");
        assertThat(validating.databaseClock()).contains(true);
        assertThat(validating.schemaMode()).isEqualTo(SchemaMode.VALIDATE);
        assertThat(shop.schemaMode()).isEqualTo(SchemaMode.MIGRATE);
    }

    @Test
    void aTableIsThePrefixAndTheNameQualifiedByTheSchemaWhenOneIsSet() {
        assertThat(StoreOptions.defaults().qualifiedTable("jobs")).isEqualTo("stagger_jobs");
        assertThat(StoreOptions.builder().tablePrefix("shop_").schema("billing").build().qualifiedTable("inbox"))
                .isEqualTo("billing.shop_inbox");
    }

    @Test
    void theDatabaseClockIsUsedOnPostgresqlAndNotOnSqliteUnlessSet() {
        StoreOptions defaults = StoreOptions.defaults();
        assertThat(defaults.usesDatabaseClock(Database.POSTGRESQL)).isTrue();
        assertThat(defaults.usesDatabaseClock(Database.SQLITE)).isFalse();
        assertThat(defaults.toBuilder().databaseClock(false).build().usesDatabaseClock(Database.POSTGRESQL)).isFalse();
        assertThat(defaults.toBuilder().databaseClock(true).build().usesDatabaseClock(Database.SQLITE)).isTrue();
    }

    @ParameterizedTest
    @ValueSource(strings = {"Shop_", "1shop_", "_shop", "shop-", "shop.", "keys; DROP TABLE users", "", "a_b c"})
    void aTablePrefixThatIsNotPlainIsRefusedNamingTheFieldAndTheValue(String prefix) {
        assertThatThrownBy(() -> StoreOptions.builder().tablePrefix(prefix))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("tablePrefix must match [a-z][a-z0-9_]{0,40}, got '" + prefix + "'");
    }

    @Test
    void aTablePrefixLongerThan41CharactersIsRefusedWithACappedEcho() {
        assertThat(StoreOptions.builder().tablePrefix("p" + "_".repeat(40)).build().tablePrefix()).hasSize(41);
        assertThatThrownBy(() -> StoreOptions.builder().tablePrefix("p" + "_".repeat(41)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("tablePrefix");
        assertThatThrownBy(() -> StoreOptions.builder().tablePrefix("x".repeat(10_000)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("tablePrefix")
                .hasMessageContaining("(10000 characters)").message().hasSizeLessThan(200);
    }

    @Test
    void aNullTablePrefixIsRefusedNamingTheField() {
        assertThatThrownBy(() -> StoreOptions.builder().tablePrefix(null))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("tablePrefix must match [a-z][a-z0-9_]{0,40}, got null");
    }

    @ParameterizedTest
    @ValueSource(strings = {"Billing", "9billing", "billing.x", "app; DROP", ""})
    void aSchemaThatIsNotPlainIsRefusedNamingTheFieldAndTheValue(String schema) {
        assertThatThrownBy(() -> StoreOptions.builder().schema(schema))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("schema must match [a-z_][a-z0-9_]{0,62}, got '" + schema + "'");
    }

    @Test
    void aMissingClockOrSchemaModeIsRefusedNamingTheField() {
        assertThatThrownBy(() -> StoreOptions.builder().clock(null))
                .isInstanceOf(NullPointerException.class).hasMessage("clock must not be null");
        assertThatThrownBy(() -> StoreOptions.builder().schemaMode(null))
                .isInstanceOf(NullPointerException.class).hasMessage("schemaMode must not be null");
    }
}
