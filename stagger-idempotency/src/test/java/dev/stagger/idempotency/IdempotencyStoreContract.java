package dev.stagger.idempotency;

import static org.assertj.core.api.Assertions.assertThat;

import dev.stagger.testing.VirtualClock;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** What every {@link IdempotencyStore} promises; each store runs these against its real backend. */
abstract class IdempotencyStoreContract {
    static final Duration LEASE = Duration.ofSeconds(60);
    static final Duration EXPIRY = Duration.ofHours(24);

    VirtualClock clock;
    IdempotencyStore store;

    abstract IdempotencyStore newStore(VirtualClock clock) throws Exception;

    /**
     * Lets {@code d} pass for the store. A store on its own clock sees the virtual clock move; a
     * store on the database's clock cannot be moved, so its rows are moved back by {@code d} instead.
     */
    void advance(Duration d) throws Exception {
        clock.advance(d);
    }

    /** Moves every time in {@code table} back by {@code d}: as if {@code d} had passed on the database's clock. */
    static void shiftBack(javax.sql.DataSource dataSource, String table, Duration d) throws java.sql.SQLException {
        long ms = d.toMillis();
        try (java.sql.Connection c = dataSource.getConnection(); java.sql.Statement s = c.createStatement()) {
            s.executeUpdate("UPDATE " + table + " SET lease_until = lease_until - " + ms + ", expires_at = expires_at - "
                    + ms + ", created_at = created_at - " + ms);
        }
    }

    @BeforeEach
    void createStore() throws Exception {
        clock = new VirtualClock();
        store = newStore(clock);
    }

    static IdempotencyScope scope(String client, String key) {
        return new IdempotencyScope(client, "POST", "/orders", IdempotencyKey.of(key));
    }

    static RequestFingerprint fingerprint(String body) {
        return RequestFingerprint.of("POST", "/orders", null, Map.of("Content-Type", "application/json"),
                body.getBytes(StandardCharsets.UTF_8));
    }

    static StoredResponse created(String body) {
        return StoredResponse.of(201, Map.of("Content-Type", List.of("application/json"), "Location", List.of("/orders/1")),
                body.getBytes(StandardCharsets.UTF_8));
    }

    Claim.Acquired acquire(IdempotencyScope scope, RequestFingerprint fp) {
        Claim claim = store.claim(scope, fp, LEASE, EXPIRY);
        assertThat(claim).isInstanceOf(Claim.Acquired.class);
        return (Claim.Acquired) claim;
    }

    @Test
    void theFirstClaimAcquiresTheKeyAsInFlight() {
        Claim.Acquired acquired = acquire(scope("alice", "k1"), fingerprint("{}"));

        assertThat(acquired.tookOver()).isFalse();
        assertThat(store.find(scope("alice", "k1")).orElseThrow().state()).isEqualTo(IdempotencyRecord.State.IN_FLIGHT);
    }

    @Test
    void aRepeatWhileTheLeaseIsValidIsToldTheRequestIsInFlight() throws Exception {
        acquire(scope("alice", "k1"), fingerprint("{}"));
        advance(Duration.ofSeconds(59));

        assertThat(store.claim(scope("alice", "k1"), fingerprint("{}"), LEASE, EXPIRY)).isInstanceOf(Claim.InFlight.class);
    }

    @Test
    void aRepeatAfterCompletionGetsTheStoredResponseByteForByte() {
        Claim.Acquired acquired = acquire(scope("alice", "k1"), fingerprint("{}"));
        assertThat(store.complete(scope("alice", "k1"), acquired.leaseToken(), created("{\"id\":1}"), EXPIRY)).isTrue();

        Claim again = store.claim(scope("alice", "k1"), fingerprint("{}"), LEASE, EXPIRY);

        assertThat(again).isInstanceOf(Claim.Replay.class);
        StoredResponse replayed = ((Claim.Replay) again).response();
        assertThat(replayed).isEqualTo(created("{\"id\":1}"));
        assertThat(replayed.body()).isEqualTo("{\"id\":1}".getBytes(StandardCharsets.UTF_8));
    }

    @Test
    void theSameKeyWithADifferentFingerprintIsAMismatchWhetherRunningOrDone() {
        Claim.Acquired acquired = acquire(scope("alice", "k1"), fingerprint("{\"n\":1}"));
        assertThat(store.claim(scope("alice", "k1"), fingerprint("{\"n\":2}"), LEASE, EXPIRY)).isInstanceOf(Claim.Mismatch.class);

        store.complete(scope("alice", "k1"), acquired.leaseToken(), created("{}"), EXPIRY);
        assertThat(store.claim(scope("alice", "k1"), fingerprint("{\"n\":2}"), LEASE, EXPIRY)).isInstanceOf(Claim.Mismatch.class);
    }

    @Test
    void anotherClientWithTheSameKeyHasItsOwnScope() {
        Claim.Acquired acquired = acquire(scope("alice", "k1"), fingerprint("{}"));
        store.complete(scope("alice", "k1"), acquired.leaseToken(), created("{\"owner\":\"alice\"}"), EXPIRY);

        assertThat(store.claim(scope("bob", "k1"), fingerprint("{}"), LEASE, EXPIRY)).isInstanceOf(Claim.Acquired.class);
    }

    @Test
    void aReleasedKeyIsClaimedAfresh() {
        Claim.Acquired first = acquire(scope("alice", "k1"), fingerprint("{}"));
        assertThat(store.release(scope("alice", "k1"), first.leaseToken())).isTrue();

        assertThat(store.find(scope("alice", "k1"))).isEmpty();
        assertThat(store.claim(scope("alice", "k1"), fingerprint("{}"), LEASE, EXPIRY)).isInstanceOf(Claim.Acquired.class);
    }

    @Test
    void anExpiredLeaseIsTakenOverAndTheOldOwnerCanNoLongerCompleteOrRelease() throws Exception {
        Claim.Acquired first = acquire(scope("alice", "k1"), fingerprint("{}"));
        advance(LEASE);

        Claim.Acquired second = acquire(scope("alice", "k1"), fingerprint("{}"));

        assertThat(second.tookOver()).isTrue();
        assertThat(store.complete(scope("alice", "k1"), first.leaseToken(), created("{\"by\":1}"), EXPIRY)).isFalse();
        assertThat(store.release(scope("alice", "k1"), first.leaseToken())).isFalse();
        assertThat(store.complete(scope("alice", "k1"), second.leaseToken(), created("{\"by\":2}"), EXPIRY)).isTrue();
        assertThat(store.find(scope("alice", "k1")).orElseThrow().response()).contains(created("{\"by\":2}"));
    }

    @Test
    void aCompletedRecordCannotBeReleased() {
        Claim.Acquired first = acquire(scope("alice", "k1"), fingerprint("{}"));
        store.complete(scope("alice", "k1"), first.leaseToken(), created("{}"), EXPIRY);

        assertThat(store.release(scope("alice", "k1"), first.leaseToken())).isFalse();
        assertThat(store.find(scope("alice", "k1"))).isPresent();
    }

    @Test
    void anExpiredRecordCountsAsAbsent() throws Exception {
        Claim.Acquired first = acquire(scope("alice", "k1"), fingerprint("{\"old\":1}"));
        store.complete(scope("alice", "k1"), first.leaseToken(), created("{}"), EXPIRY);
        advance(EXPIRY);

        Claim claim = store.claim(scope("alice", "k1"), fingerprint("{\"new\":1}"), LEASE, EXPIRY);

        assertThat(claim).isInstanceOf(Claim.Acquired.class);
        assertThat(((Claim.Acquired) claim).tookOver()).isFalse();
    }

    @Test
    void purgeDeletesOnlyExpiredRecordsInBatchesOfTheGivenSize() throws Exception {
        for (int i = 0; i < 7; i++) {
            Claim.Acquired a = acquire(scope("alice", "old" + i), fingerprint("{}"));
            store.complete(scope("alice", "old" + i), a.leaseToken(), created("{}"), EXPIRY);
        }
        advance(Duration.ofHours(12));
        acquire(scope("alice", "fresh"), fingerprint("{}"));
        advance(Duration.ofHours(12));

        assertThat(store.purgeExpired(3)).isEqualTo(3);
        assertThat(store.purgeAllExpired(3)).isEqualTo(4);
        assertThat(store.purgeExpired(3)).isZero();
        assertThat(store.find(scope("alice", "fresh"))).isPresent();
        assertThat(store.find(scope("alice", "old0"))).isEmpty();
    }

    @Test
    void concurrentClaimsOfOneScopeAcquireItExactlyOnce() throws Exception {
        int threads = 16;
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            CountDownLatch start = new CountDownLatch(1);
            List<Future<Claim>> futures = new ArrayList<>();
            for (int i = 0; i < threads; i++) {
                Callable<Claim> task = () -> {
                    start.await();
                    return store.claim(scope("alice", "race"), fingerprint("{}"), LEASE, EXPIRY);
                };
                futures.add(pool.submit(task));
            }
            start.countDown();
            int acquired = 0;
            for (Future<Claim> f : futures) {
                Claim c = f.get();
                assertThat(c).isInstanceOfAny(Claim.Acquired.class, Claim.InFlight.class);
                acquired += c instanceof Claim.Acquired ? 1 : 0;
            }
            assertThat(acquired).isEqualTo(1);
        } finally {
            pool.shutdownNow();
        }
    }
}
