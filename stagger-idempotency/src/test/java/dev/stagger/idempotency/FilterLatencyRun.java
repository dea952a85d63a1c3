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
            System.out.printf("%d requests per configuration, 1 client thread, loopback%n",
                    requests);
            try (JdbcIdempotencyStore sqlite = JdbcIdempotencyStore.sqlite(tmp.resolve("keys.db"))) {
                run("SQLite file, JdbcIdempotencyStore.sqlite(path)", plain, sqlite, handler, requests);
            }
            DataSource pg = TestDatabases.postgres();
            String prefix = PostgresTables.uniquePrefix();
            try (ConnectionPool pool = new ConnectionPool(pg, 4)) {
                run("PostgreSQL, 4 pooled connections", plain,
                        JdbcIdempotencyStore.builder(pool).tablePrefix(prefix).build(), handler, requests);
            } finally {
                PostgresTables.drop(pg, prefix);
            }
        }
    }

    private static void run(String name, TestServer plain, JdbcIdempotencyStore store, TestServer.Handler handler,
                            int requests) throws Exception {
        try (TestServer filtered = TestServer.start(handler, IdempotencyFilter.builder(store).build())) {
            URI without = plain.uri("/orders");
            URI with = filtered.uri("/orders");
            measure(without, with, requests / 5, false); // warm-up
            print(name + ", first execution", measure(without, with, requests, false));
            print(name + ", replay", measure(without, with, requests, true));
        }
    }

    private static void print(String name, long[][] nanos) {
        long[] base = nanos[0];
        long[] idem = nanos[1];
        Arrays.sort(base);
        Arrays.sort(idem);
        System.out.printf("%-62s without p50 %6.3f ms p99 %6.3f ms | with p50 %6.3f ms p99 %6.3f ms"
                        + " | added p50 %6.3f ms p99 %6.3f ms%n", name,
                ms(pct(base, 50)), ms(pct(base, 99)), ms(pct(idem, 50)), ms(pct(idem, 99)),
                ms(pct(idem, 50) - pct(base, 50)), ms(pct(idem, 99) - pct(base, 99)));
    }

    /** Alternates plain and filtered requests; with {@code replay}, each timed filtered request repeats a completed key. */
    private static long[][] measure(URI without, URI with, int n, boolean replay) throws Exception {
        long[] base = new long[n];
        long[] idem = new long[n];
        for (int i = 0; i < n; i++) {
            String key = UUID.randomUUID().toString();
            if (replay) {
                time(with, key, 201);
            }
            base[i] = time(without, UUID.randomUUID().toString(), 201);
            idem[i] = time(with, key, 201);
        }
        return new long[][] {base, idem};
    }

    private static long time(URI uri, String key, int expectedStatus) throws Exception {
        long start = System.nanoTime();
        HttpResponse<byte[]> r = Http.send(Http.post(uri, key, "alice", "{\"item\":\"book\"}"));
        long elapsed = System.nanoTime() - start;
        if (r.statusCode() != expectedStatus) {
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
