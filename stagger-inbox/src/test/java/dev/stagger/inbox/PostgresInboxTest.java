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

class PostgresInboxTest extends InboxContract {
    private final DataSource ds = TestDatabases.postgres();

    @Override
    DataSource dataSource() {
        return ds;
    }

    @Test
    void aSecondDeliveryRacingTheFirstWaitsForItAndThenSeesADuplicate() throws Exception {
        Inbox inbox = inbox("billing", prefix());
        CountDownLatch firstRecorded = new CountDownLatch(1);
        CountDownLatch finishFirst = new CountDownLatch(1);
        CompletableFuture<Boolean> first = CompletableFuture.supplyAsync(() -> {
            try (Connection c = ds.getConnection()) {
                c.setAutoCommit(false);
                boolean fresh = inbox.record(c, "order-7");
                firstRecorded.countDown();
                finishFirst.await();
                c.commit();
                return fresh;
            } catch (SQLException | InterruptedException e) {
                throw new IllegalStateException(e);
            }
        });
        assertThat(firstRecorded.await(10, TimeUnit.SECONDS)).isTrue();
        CompletableFuture<Boolean> second = CompletableFuture.supplyAsync(() -> {
            try (Connection c = ds.getConnection()) {
                c.setAutoCommit(false);
                boolean fresh = inbox.record(c, "order-7"); // blocks on the first's row until it commits
                c.commit();
                return fresh;
            } catch (SQLException e) {
                throw new IllegalStateException(e);
            }
        });
        assertThat(second).isNotDone();
        finishFirst.countDown();
        assertThat(first.get(10, TimeUnit.SECONDS)).isTrue();
        assertThat(second.get(10, TimeUnit.SECONDS)).isFalse();
    }

    @Test
    void aSchemaHoldsTheTable() throws SQLException {
        String schema = "inbox_s" + Long.toHexString(System.nanoTime());
        try {
            Inbox inbox = Inbox.builder("billing", ds).schema(schema).tablePrefix("shop_").build();
            assertThat(inbox.tableName()).isEqualTo(schema + ".shop_inbox");
            try (Connection c = ds.getConnection()) {
                assertThat(inbox.record(c, "k")).isTrue();
            }
            assertThat(Inbox.builder("billing", ds).schema(schema).tablePrefix("shop_").build().contains("k")).isTrue();
        } finally {
            try (Connection c = ds.getConnection(); Statement s = c.createStatement()) {
                s.execute("DROP SCHEMA IF EXISTS " + schema + " CASCADE");
            }
        }
    }
}
