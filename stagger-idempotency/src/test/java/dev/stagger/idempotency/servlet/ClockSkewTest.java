package dev.stagger.idempotency.servlet;

import static org.assertj.core.api.Assertions.assertThat;

import dev.stagger.Clock;
import dev.stagger.idempotency.JdbcIdempotencyStore;
import dev.stagger.jdbc.internal.ConnectionPool;
import dev.stagger.idempotency.support.Http;
import dev.stagger.idempotency.support.PostgresTables;
import dev.stagger.idempotency.support.TestServer;
import dev.stagger.testsupport.jdbc.TestDatabases;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Two servers sharing one PostgreSQL whose clocks disagree by two minutes: server A's runs 60 s
 * ahead, server B's 60 s behind. Leases (30 s) and expiries (90 s) are shorter than the skew, so
 * any comparison made on a server's own clock shows: B's fresh lease looks expired to A, and B's
 * fresh response looks expired to A.
 */
class ClockSkewTest {
    private static final Duration LEASE = Duration.ofSeconds(30);
    private static final Duration EXPIRY = Duration.ofSeconds(90);
    private static final String ORDER = "{\"item\":\"book\"}";

    /** The system clock, but its wall-clock reading moved by {@code offset}: a machine whose clock is off. */
    private record SkewedClock(Duration offset) implements Clock {
        @Override
        public long nanoTime() {
            return Clock.system().nanoTime();
        }

        @Override
        public long currentTimeMillis() {
            return Clock.system().currentTimeMillis() + offset.toMillis();
        }

        @Override
        public void sleep(long nanos) throws InterruptedException {
            Clock.system().sleep(nanos);
        }

        @Override
        public Cancellable schedule(Runnable task, long delayNanos) {
            return Clock.system().schedule(task, delayNanos);
        }
    }

    private final AtomicInteger executions = new AtomicInteger();
    private final CountDownLatch entered = new CountDownLatch(1);
    private final CountDownLatch finish = new CountDownLatch(1);
    private volatile boolean holdFirst;
    private DataSource pg;
    private final String prefix = PostgresTables.uniquePrefix();
    private ConnectionPool poolA;
    private ConnectionPool poolB;
    private TestServer ahead;
    private TestServer behind;

    @BeforeEach
    void start() throws Exception {
        pg = TestDatabases.postgres();
        poolA = new ConnectionPool(pg, 4);
        poolB = new ConnectionPool(pg, 4);
        TestServer.Handler handler = (req, res) -> {
            req.getInputStream().readAllBytes();
            int n = executions.incrementAndGet();
            if (holdFirst && n == 1) {
                entered.countDown();
                try {
                    finish.await(20, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
            res.setStatus(201);
            res.setContentType("application/json");
            res.getOutputStream().write(("{\"order\":" + n + "}").getBytes(StandardCharsets.UTF_8));
        };
        JdbcIdempotencyStore storeA = JdbcIdempotencyStore.builder(poolA).tablePrefix(prefix)
                .clock(new SkewedClock(Duration.ofSeconds(60))).build();
        JdbcIdempotencyStore storeB = JdbcIdempotencyStore.builder(poolB).tablePrefix(prefix)
                .clock(new SkewedClock(Duration.ofSeconds(-60))).build();
        ahead = TestServer.start(handler, IdempotencyFilter.builder(storeA).lease(LEASE).expiry(EXPIRY).build());
        behind = TestServer.start(handler, IdempotencyFilter.builder(storeB).lease(LEASE).expiry(EXPIRY).build());
    }

    @AfterEach
    void stop() throws Exception {
        finish.countDown();
        for (AutoCloseable c : new AutoCloseable[] {ahead, behind, poolA, poolB}) {
            if (c != null) {
                c.close();
            }
        }
        PostgresTables.drop(pg, prefix);
    }

    @Test
    void aServerWhoseClockRunsAheadDoesNotTakeOverALeaseTheOtherServerJustTook() throws Exception {
        holdFirst = true;
        CompletableFuture<HttpResponse<byte[]>> first = Http.CLIENT.sendAsync(
                Http.post(behind.uri("/orders"), "k-skew", "alice", ORDER), HttpResponse.BodyHandlers.ofByteArray());
        assertThat(entered.await(20, TimeUnit.SECONDS)).isTrue();

        HttpResponse<byte[]> repeat = Http.send(Http.post(ahead.uri("/orders"), "k-skew", "alice", ORDER));
        finish.countDown();

        assertThat(repeat.statusCode()).as("the first request still holds its lease").isEqualTo(409);
        assertThat(first.get(20, TimeUnit.SECONDS).statusCode()).isEqualTo(201);
        assertThat(executions).hasValue(1);
    }

    @Test
    void aResponseStoredByAServerWhoseClockRunsBehindIsReplayedNotExpiredByOneAhead() throws Exception {
        HttpResponse<byte[]> first = Http.send(Http.post(behind.uri("/orders"), "k-skew", "alice", ORDER));

        HttpResponse<byte[]> repeat = Http.send(Http.post(ahead.uri("/orders"), "k-skew", "alice", ORDER));

        assertThat(first.statusCode()).isEqualTo(201);
        assertThat(repeat.headers().firstValue("Idempotent-Replayed")).contains("true");
        assertThat(repeat.body()).isEqualTo(first.body());
        assertThat(executions).hasValue(1);
    }

    @Test
    void aServerWhoseClockRunsBehindDoesNotKeepALeaseAliveLongerThanTheDatabaseSays() throws Exception {
        holdFirst = true;
        CompletableFuture<HttpResponse<byte[]>> first = Http.CLIENT.sendAsync(
                Http.post(ahead.uri("/orders"), "k-skew", "alice", ORDER), HttpResponse.BodyHandlers.ofByteArray());
        assertThat(entered.await(20, TimeUnit.SECONDS)).isTrue();
        // 31 s pass on the database's clock: the first request's 30 s lease is over, whatever A's clock says
        shiftBack(Duration.ofSeconds(31));

        HttpResponse<byte[]> takeover = Http.send(Http.post(behind.uri("/orders"), "k-skew", "alice", ORDER));
        finish.countDown();

        assertThat(takeover.statusCode()).as("B took the key over although its clock is 2 minutes behind A's")
                .isEqualTo(201);
        first.get(20, TimeUnit.SECONDS);
        assertThat(executions).hasValue(2);
    }

    private void shiftBack(Duration d) throws Exception {
        try (java.sql.Connection c = pg.getConnection(); java.sql.Statement s = c.createStatement()) {
            s.executeUpdate("UPDATE " + prefix + "idempotency SET lease_until = lease_until - " + d.toMillis()
                    + ", expires_at = expires_at - " + d.toMillis());
        }
    }
}
