package dev.stagger.inbox;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.stagger.jdbc.SqliteDataSource;
import dev.stagger.jdbc.StoreException;
import dev.stagger.testsupport.jdbc.TestDatabases;
import dev.stagger.testing.VirtualClock;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The behaviour every database must show. */
abstract class InboxContract {
    final VirtualClock clock = new VirtualClock();

    abstract DataSource dataSource();

    /** A table prefix of this test's own, so that runs and tests never share a table. */
    String prefix() {
        return "stagger_t" + Long.toHexString(System.nanoTime()) + "_";
    }

    Inbox inbox(String name, String prefix) {
        return Inbox.builder(name, dataSource()).tablePrefix(prefix).expiry(Duration.ofHours(1)).clock(clock).build();
    }

    @Test
    void theFirstDeliveryIsRecordedAndTheSecondIsADuplicate() throws SQLException {
        Inbox inbox = inbox("billing", prefix());
        try (Connection c = dataSource().getConnection()) {
            assertThat(inbox.record(c, "order-1")).isTrue();
            assertThat(inbox.record(c, "order-1")).isFalse();
        }
        assertThat(inbox.contains("order-1")).isTrue();
        assertThat(inbox.contains("order-2")).isFalse();
    }

    @Test
    void aRolledBackTransactionLeavesTheKeyUnprocessed() throws SQLException {
        Inbox inbox = inbox("billing", prefix());
        try (Connection c = dataSource().getConnection()) {
            c.setAutoCommit(false);
            assertThat(inbox.record(c, "order-1")).isTrue();
            c.rollback(); // the effect failed: neither the effect nor the key stays
            assertThat(inbox.record(c, "order-1")).isTrue();
            c.commit();
        }
        assertThat(inbox.contains("order-1")).isTrue();
    }

    @Test
    void twoConsumersOfOneMessageEachProcessItOnce() throws SQLException {
        String prefix = prefix();
        Inbox billing = inbox("billing", prefix);
        Inbox shipping = inbox("shipping", prefix);
        try (Connection c = dataSource().getConnection()) {
            assertThat(billing.record(c, "event-9")).isTrue();
            assertThat(shipping.record(c, "event-9")).isTrue();
            assertThat(shipping.record(c, "event-9")).isFalse();
        }
    }

    @Test
    void expiredKeysArePurgedAndKeysWithinTheirExpiryAreKept() throws SQLException {
        Inbox inbox = inbox("billing", prefix());
        try (Connection c = dataSource().getConnection()) {
            inbox.record(c, "old");
            clock.advance(Duration.ofMinutes(59));
            inbox.record(c, "new");
        }
        assertThat(inbox.purgeExpired(100)).isZero();
        clock.advance(Duration.ofMinutes(1));
        assertThat(inbox.purgeExpired(100)).isEqualTo(1);
        assertThat(inbox.contains("old")).isFalse();
        assertThat(inbox.contains("new")).isTrue();
    }

    @Test
    void purgingTouchesOnlyItsOwnConsumer() throws SQLException {
        String prefix = prefix();
        Inbox billing = inbox("billing", prefix);
        Inbox shipping = Inbox.builder("shipping", dataSource()).tablePrefix(prefix).expiry(Duration.ofDays(2))
                .clock(clock).build();
        try (Connection c = dataSource().getConnection()) {
            billing.record(c, "k");
            shipping.record(c, "k");
        }
        clock.advance(Duration.ofHours(2));
        assertThat(shipping.purgeExpired(10)).isZero();
        assertThat(billing.purgeExpired(10)).isEqualTo(1);
        assertThat(shipping.contains("k")).isTrue();
    }

    @Test
    void aKeyTooLongIsRefusedNamingTheFieldWithoutEchoingItWhole() throws SQLException {
        Inbox inbox = inbox("billing", prefix());
        String key = "k".repeat(300);
        try (Connection c = dataSource().getConnection()) {
            assertThatThrownBy(() -> inbox.record(c, key)).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("key must have 1 to 255 characters")
                    .hasMessageContaining("(300 characters)")
                    .hasMessageNotContaining("k".repeat(65));
            assertThatThrownBy(() -> inbox.record(c, "")).isInstanceOf(IllegalArgumentException.class);
            assertThatThrownBy(() -> inbox.record(c, null)).isInstanceOf(NullPointerException.class)
                    .hasMessage("key must not be null");
        }
    }

    @Test
    void aFailedStatementIsAnUncheckedStoreExceptionWithTheSqlState() throws SQLException {
        Inbox inbox = inbox("billing", prefix());
        String table = inbox.tableName();
        try (Connection c = dataSource().getConnection(); Statement s = c.createStatement()) {
            s.execute("DROP TABLE " + table);
            assertThatThrownBy(() -> inbox.record(c, "k")).isInstanceOf(StoreException.class)
                    .hasCauseInstanceOf(SQLException.class).hasMessageContaining(table);
        }
    }
}
