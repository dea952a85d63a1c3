package dev.stagger.idempotency;

import dev.stagger.jdbc.StoreException;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.stagger.jdbc.SqliteDataSource;
import dev.stagger.testing.VirtualClock;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The built-in purge schedule, driven by a virtual clock. */
class PurgeScheduleTest {
    private static final Duration LEASE = Duration.ofSeconds(60);
    private static final Duration EXPIRY = Duration.ofHours(1);

    @TempDir
    Path dir;

    private final VirtualClock clock = new VirtualClock();
    private final List<Long> purged = new CopyOnWriteArrayList<>();
    private final IdempotencyListener listener = new IdempotencyListener() {
        @Override
        public void purged(long removed) {
            purged.add(removed);
        }
    };

    private static IdempotencyScope scope(String key) {
        return new IdempotencyScope("alice", "POST", "/orders", IdempotencyKey.of(key));
    }

    private static void completeOne(IdempotencyStore store, String key) {
        RequestFingerprint fp = RequestFingerprint.of("POST", "/orders", null, Map.of(), new byte[0]);
        Claim.Acquired a = (Claim.Acquired) store.claim(scope(key), fp, LEASE, EXPIRY);
        store.complete(scope(key), a.leaseToken(), StoredResponse.of(201, Map.of(), "{}".getBytes(StandardCharsets.UTF_8)),
                EXPIRY);
    }

    private JdbcIdempotencyStore.Builder builder() {
        return JdbcIdempotencyStore.builder(SqliteDataSource.file(dir.resolve("keys.db"))).clock(clock)
                .idempotencyListener(listener);
    }

    @Test
    void expiredRecordsArePurgedOnEveryIntervalInBatchesUntilNoneAreLeft() {
        try (JdbcIdempotencyStore store = builder().purgeInterval(Duration.ofMinutes(10)).purgeBatchSize(2).build()) {
            for (int i = 0; i < 5; i++) {
                completeOne(store, "old-" + i);
            }
            clock.advance(EXPIRY.minusMinutes(5));
            completeOne(store, "fresh");
            clock.advance(Duration.ofMinutes(4));
            assertThat(store.count()).as("nothing expired yet, so the purges so far removed nothing").isEqualTo(6);

            clock.advance(Duration.ofMinutes(6)); // past the old records' expiry, and a purge falls due

            assertThat(store.count()).isEqualTo(1);
            assertThat(store.find(scope("fresh"))).isPresent();
            assertThat(purged).contains(5L);
            assertThat(purged.stream().mapToLong(Long::longValue).sum()).isEqualTo(5);
        }
    }

    @Test
    void withoutAnIntervalNothingIsPurgedBehindTheCallersBack() {
        try (JdbcIdempotencyStore store = builder().build()) {
            completeOne(store, "old");
            clock.advance(Duration.ofDays(30));

            assertThat(store.count()).isEqualTo(1);
            assertThat(purged).isEmpty();
        }
    }

    @Test
    void closingTheStoreStopsTheSchedule() {
        JdbcIdempotencyStore store = builder().purgeInterval(Duration.ofMinutes(10)).build();
        clock.advance(Duration.ofMinutes(10));
        assertThat(purged).containsExactly(0L);

        store.close();
        clock.advance(Duration.ofHours(5));

        assertThat(purged).containsExactly(0L);
    }

    @Test
    void aFailedPurgeIsReportedAndTheNextOneStillRuns() throws Exception {
        List<RuntimeException> failures = new CopyOnWriteArrayList<>();
        IdempotencyListener failing = new IdempotencyListener() {
            @Override
            public void purged(long removed) {
                purged.add(removed);
            }

            @Override
            public void purgeFailed(RuntimeException error) {
                failures.add(error);
            }
        };
        try (JdbcIdempotencyStore store = builder().idempotencyListener(failing).purgeInterval(Duration.ofMinutes(1))
                .build()) {
            try (var c = SqliteDataSource.file(dir.resolve("keys.db")).getConnection(); var s = c.createStatement()) {
                s.execute("ALTER TABLE stagger_idempotency RENAME TO stagger_idempotency_away");
            }
            clock.advance(Duration.ofMinutes(1));
            assertThat(failures).hasSize(1).allSatisfy(e -> assertThat(e).isInstanceOf(StoreException.class));

            try (var c = SqliteDataSource.file(dir.resolve("keys.db")).getConnection(); var s = c.createStatement()) {
                s.execute("ALTER TABLE stagger_idempotency_away RENAME TO stagger_idempotency");
            }
            clock.advance(Duration.ofMinutes(1));
            assertThat(purged).containsExactly(0L);
        }
    }

    @Test
    void theScheduleSettingsNameTheBadFieldAndValue() {
        assertThatThrownBy(() -> builder().purgeInterval(Duration.ZERO))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("purgeInterval").hasMessageContaining("PT0S");
        assertThatThrownBy(() -> builder().purgeInterval(Duration.ofSeconds(Long.MAX_VALUE)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("purgeInterval must be at most a year");
        assertThatThrownBy(() -> builder().purgeBatchSize(0))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("purgeBatchSize").hasMessageContaining("0");
    }
}
