package dev.stagger.idempotency;

import dev.stagger.idempotency.servlet.IdempotencyFilter;
import dev.stagger.idempotency.support.Http;
import dev.stagger.idempotency.internal.ConnectionPool;
import dev.stagger.idempotency.support.PostgresTables;
import dev.stagger.idempotency.support.TestServer;
import dev.stagger.jdbc.testsupport.TestDatabases;
import java.net.URI;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.UUID;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;

/**
 * A small loopback load run: the same handler on two Jetty servers, one without and one with the
 * filter, called alternately by one client; prints p50/p99 per request and the difference. It
 * asserts only that every request succeeded, never a timing. Its name keeps it out of the normal
 * suite; run it on purpose as described in the module README. {@code -Dlatency.requests=N} sets
 * the requests per configuration (default 3000).
 */
class FilterLatencyRun {

    @Test
    void printsTheLatencyTheFilterAddsOnSqliteAndPostgres() throws Exception {
        int requests = Integer.getInteger("latency.requests", 3000);
        TestServer.Handler handler = (req, res) -> {
            req.getInputStream().readAllBytes();
            res.setStatus(201);
            res.setContentType("application/json");
            res.getOutputStream().write("{\"order\":1}".getBytes(StandardCharsets.UTF_8));
        };
        Path tmp = Files.createTempDirectory("stagger-idem-latency");
        try (TestServer plain = TestServer.start(handler)) {
            System.out.printf("%d requests per configuration, 1 client thread, loopback; first execution of each key%n",
                    requests);
            try (JdbcIdempotencyStore sqlite = JdbcIdempotencyStore.sqlite(tmp.resolve("keys.db"))) {
                run("SQLite file, JdbcIdempotencyStore.sqlite(path)", plain, sqlite, handler, requests);
            }
            DataSource pg = TestDatabases.postgres();
            String table = PostgresTables.uniqueName();
            try (ConnectionPool pool = new ConnectionPool(pg, 4)) {
                run("PostgreSQL, 4 pooled connections", plain,
                        JdbcIdempotencyStore.builder(pool).tableName(table).build(), handler, requests);
            } finally {
                PostgresTables.drop(pg, table);
            }
        }
    }

    private static void run(String name, TestServer plain, JdbcIdempotencyStore store, TestServer.Handler handler,
                            int requests) throws Exception {
        try (TestServer filtered = TestServer.start(handler, IdempotencyFilter.builder(store).build())) {
            URI without = plain.uri("/orders");
            URI with = filtered.uri("/orders");
            measure(without, with, requests / 5); // warm-up
            long[][] nanos = measure(without, with, requests);
            long[] base = nanos[0];
            long[] idem = nanos[1];
            Arrays.sort(base);
            Arrays.sort(idem);
            System.out.printf("%-55s without p50 %7.3f ms p99 %7.3f ms | with p50 %7.3f ms p99 %7.3f ms"
                            + " | added p50 %6.3f ms p99 %6.3f ms%n", name,
                    ms(pct(base, 50)), ms(pct(base, 99)), ms(pct(idem, 50)), ms(pct(idem, 99)),
                    ms(pct(idem, 50) - pct(base, 50)), ms(pct(idem, 99) - pct(base, 99)));
        }
    }

    private static long[][] measure(URI without, URI with, int n) throws Exception {
        long[] base = new long[n];
        long[] idem = new long[n];
        for (int i = 0; i < n; i++) {
            base[i] = time(without, UUID.randomUUID().toString());
            idem[i] = time(with, UUID.randomUUID().toString());
        }
        return new long[][] {base, idem};
    }

    private static long time(URI uri, String key) throws Exception {
        long start = System.nanoTime();
        HttpResponse<byte[]> r = Http.send(Http.post(uri, key, "alice", "{\"item\":\"book\"}"));
        long elapsed = System.nanoTime() - start;
        if (r.statusCode() != 201) {
            throw new AssertionError("unexpected status " + r.statusCode() + " from " + uri);
        }
        return elapsed;
    }

    private static long pct(long[] sorted, int p) {
        return sorted[Math.min(sorted.length - 1, (int) Math.ceil(p / 100.0 * sorted.length) - 1)];
    }

    private static double ms(long nanos) {
        return nanos / 1e6;
    }
}
