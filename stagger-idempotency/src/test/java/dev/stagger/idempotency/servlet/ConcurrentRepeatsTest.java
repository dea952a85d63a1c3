package dev.stagger.idempotency.servlet;

import static org.assertj.core.api.Assertions.assertThat;

import dev.stagger.idempotency.JdbcIdempotencyStore;
import dev.stagger.idempotency.support.Http;
import dev.stagger.jdbc.internal.ConnectionPool;
import dev.stagger.idempotency.support.PostgresTables;
import dev.stagger.idempotency.support.TestServer;
import dev.stagger.jdbc.SqliteDataSource;
import dev.stagger.testsupport.jdbc.TestDatabases;
import jakarta.servlet.Filter;
import java.net.URI;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** 100 identical POSTs at once, one key: the handler runs exactly once, on one or two servers. */
class ConcurrentRepeatsTest {
    private static final int REQUESTS = 100;
    private static final String ORDER = "{\"item\":\"book\",\"qty\":1}";

    @TempDir
    Path dir;

    private final AtomicInteger executions = new AtomicInteger();
    private final CountDownLatch allArrived = new CountDownLatch(REQUESTS);

    /** Counts requests as they reach a server, before the idempotency filter. */
    private final Filter arrivals = (req, res, chain) -> {
        allArrived.countDown();
        chain.doFilter(req, res);
    };

    private TestServer.Handler slowOrderHandler() {
        return (req, res) -> {
            req.getInputStream().readAllBytes();
            int id = executions.incrementAndGet();
            try {
                // stay in flight until every request has reached a server (bounded, in case some never do)
                allArrived.await(10, TimeUnit.SECONDS);
                Thread.sleep(50);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            res.setStatus(201);
            res.setContentType("application/json");
            res.getOutputStream().write(("{\"order\":" + id + "}").getBytes(StandardCharsets.UTF_8));
        };
    }

    @Test
    void oneHundredConcurrentRepeatsRunTheHandlerOnceOnSqlite() throws Exception {
        try (JdbcIdempotencyStore store = JdbcIdempotencyStore.builder(SqliteDataSource.file(dir.resolve("keys.db"))).build();
             TestServer server = TestServer.start(slowOrderHandler(), arrivals, IdempotencyFilter.builder(store).build())) {
            assertRunsOnce(List.of(server.uri("/orders")));
        }
    }

    @Test
    void oneHundredConcurrentRepeatsRunTheHandlerOnceOnPostgres() throws Exception {
        DataSource pg = TestDatabases.postgres();
        String prefix = PostgresTables.uniquePrefix();
        try (ConnectionPool pool = new ConnectionPool(pg, 8)) {
            JdbcIdempotencyStore store = JdbcIdempotencyStore.builder(pool).tablePrefix(prefix).build();
            try (TestServer server = TestServer.start(slowOrderHandler(), arrivals, IdempotencyFilter.builder(store).build())) {
                assertRunsOnce(List.of(server.uri("/orders")));
            }
        } finally {
            PostgresTables.drop(pg, prefix);
        }
    }

    @Test
    void twoServersSharingOnePostgresDatabaseRunTheHandlerOnce() throws Exception {
        DataSource pg = TestDatabases.postgres();
        String prefix = PostgresTables.uniquePrefix();
        try (ConnectionPool poolA = new ConnectionPool(pg, 8); ConnectionPool poolB = new ConnectionPool(pg, 8)) {
            JdbcIdempotencyStore storeA = JdbcIdempotencyStore.builder(poolA).tablePrefix(prefix).build();
            JdbcIdempotencyStore storeB = JdbcIdempotencyStore.builder(poolB).tablePrefix(prefix).build();
            try (TestServer a = TestServer.start(slowOrderHandler(), arrivals, IdempotencyFilter.builder(storeA).build());
                 TestServer b = TestServer.start(slowOrderHandler(), arrivals, IdempotencyFilter.builder(storeB).build())) {
                assertRunsOnce(List.of(a.uri("/orders"), b.uri("/orders")));
            }
        } finally {
            PostgresTables.drop(pg, prefix);
        }
    }

    /** Fires the requests round-robin over {@code targets}, then retries every 409 until it is answered. */
    private void assertRunsOnce(List<URI> targets) throws Exception {
        List<CompletableFuture<HttpResponse<byte[]>>> inFlight = new ArrayList<>();
        for (int i = 0; i < REQUESTS; i++) {
            inFlight.add(Http.CLIENT.sendAsync(Http.post(targets.get(i % targets.size()), "same-key", "alice", ORDER),
                    HttpResponse.BodyHandlers.ofByteArray()));
        }
        List<HttpResponse<byte[]>> first = new ArrayList<>();
        for (CompletableFuture<HttpResponse<byte[]>> f : inFlight) {
            first.add(f.get(60, TimeUnit.SECONDS));
        }
        assertThat(first).allSatisfy(r -> assertThat(r.statusCode()).isIn(201, 409));
        assertThat(first).anySatisfy(r -> assertThat(r.statusCode()).isEqualTo(409));

        List<HttpResponse<byte[]>> answers = new ArrayList<>();
        for (int i = 0; i < first.size(); i++) {
            HttpResponse<byte[]> r = first.get(i);
            for (int attempt = 0; r.statusCode() == 409 && attempt < 200; attempt++) {
                Thread.sleep(20);
                r = Http.send(Http.post(targets.get(i % targets.size()), "same-key", "alice", ORDER));
            }
            answers.add(r);
        }

        assertThat(executions).hasValue(1);
        Set<String> bodies = new HashSet<>();
        answers.forEach(r -> bodies.add(r.statusCode() + " " + new String(r.body(), StandardCharsets.UTF_8)));
        assertThat(bodies).containsExactly("201 {\"order\":1}");
        assertThat(answers.stream().filter(r -> r.headers().firstValue("Idempotent-Replayed").isEmpty())).hasSize(1);
    }
}
