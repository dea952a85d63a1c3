package dev.stagger.benchmarks.idempotency;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.stagger.benchmarks.HarnessArgs;
import dev.stagger.idempotency.JdbcIdempotencyStore;
import dev.stagger.idempotency.servlet.IdempotencyFilter;
import dev.stagger.idempotency.servlet.RequestTransactions;
import dev.stagger.idempotency.servlet.ScopeResolver;
import dev.stagger.jdbc.SqliteDataSource;
import jakarta.servlet.DispatcherType;
import jakarta.servlet.Filter;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.List;
import java.util.Locale;
import java.util.UUID;
import org.eclipse.jetty.ee10.servlet.FilterHolder;
import org.eclipse.jetty.ee10.servlet.ServletContextHandler;
import org.eclipse.jetty.ee10.servlet.ServletHolder;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;

/**
 * The latency the idempotency filter adds to a request, measured from outside (a harness, not
 * JMH: the cost is a database round trip or two, milliseconds, not nanoseconds). Three Jetty
 * servers on 127.0.0.1 run the same trivial handler: without the filter (the baseline), with the
 * filter on a SQLite file ({@code JdbcIdempotencyStore.sqlite}), and with the filter on PostgreSQL
 * (HikariCP, 4 connections), and with the filter on PostgreSQL on a transactional route
 * ({@code IdempotencyFilter.Builder.transactional}: the handler runs in a transaction in which the
 * response is stored; this handler writes nothing, so the figure is the filter's whole cost). One
 * client thread sends, in each round, one request to every configuration in turn (baseline;
 * SQLite first execution; PostgreSQL first execution; PostgreSQL transactional first execution;
 * SQLite replay; PostgreSQL replay), so a disturbance of the machine lands on all of them alike.
 *
 * <p>Each run reports p50/p90/p99 per configuration and the filter's added p50 over the baseline
 * of the same run; after {@code --runs} runs, the median added p50 and the spread (min..max)
 * over the runs. Keys are new for every first execution; a replay repeats a key completed in an
 * earlier round.
 *
 * <p>Arguments (all optional): {@code --requests 2000 (timed rounds per run) --warmup 400 --runs 3
 * --pg-url jdbc:postgresql://127.0.0.1:5432/test --pg-user postgres --pg-password ""}. Tables get a
 * unique prefix and are dropped afterwards.
 */
public final class FilterLatency {
    private static final String API_KEY = "sk_bench_" + UUID.randomUUID().toString().replace("-", "");
    private static final byte[] REQUEST = "{\"item\":\"book\",\"qty\":1}".getBytes(StandardCharsets.UTF_8);
    private static final byte[] RESPONSE = "{\"order\":1}".getBytes(StandardCharsets.UTF_8);

    /** The measured configurations, in the order each round sends them. */
    enum Config {
        BASELINE("no filter (baseline)"),
        SQLITE_FIRST("SQLite file, first execution"),
        POSTGRES_FIRST("PostgreSQL, first execution"),
        POSTGRES_TX_FIRST("PostgreSQL transactional, first"),
        SQLITE_REPLAY("SQLite file, replay"),
        POSTGRES_REPLAY("PostgreSQL, replay");

        final String label;

        Config(String label) {
            this.label = label;
        }
    }

    private FilterLatency() {
    }

    public static void main(String[] args) throws Exception {
        HarnessArgs arguments = new HarnessArgs(args);
        int requests = arguments.positive("--requests", 2000);
        int warmup = arguments.positive("--warmup", 400);
        int runs = arguments.positive("--runs", 3);
        String pgUrl = arguments.text("--pg-url", "jdbc:postgresql://127.0.0.1:5432/test");
        String prefix = "bench_idem_" + Long.toString(System.currentTimeMillis(), 36) + "_";
        Path tmp = Files.createTempDirectory("stagger-idem-latency");
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(pgUrl);
        config.setUsername(arguments.text("--pg-user", "postgres"));
        config.setPassword(arguments.text("--pg-password", ""));
        config.setMaximumPoolSize(4);
        config.setPoolName("filter-latency");
        HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
                .connectTimeout(Duration.ofSeconds(5)).build();
        try (HikariDataSource pg = new HikariDataSource(config)) {
            try (JdbcIdempotencyStore sqliteStore = JdbcIdempotencyStore.sqlite(tmp.resolve("keys.db"));
                 JdbcIdempotencyStore pgStore = JdbcIdempotencyStore.builder(pg).tablePrefix(prefix).build()) {
                run(client, sqliteStore, pgStore, RequestTransactions.jdbc(pg), requests, warmup, runs);
            } finally {
                try (Connection c = pg.getConnection(); Statement s = c.createStatement()) {
                    s.execute("DROP TABLE IF EXISTS " + prefix + "idempotency");
                    s.execute("DROP TABLE IF EXISTS " + prefix + "schema_version");
                }
            }
        } finally {
            try (var files = Files.walk(tmp)) {
                files.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            }
        }
    }

    private static void run(HttpClient client, JdbcIdempotencyStore sqliteStore, JdbcIdempotencyStore pgStore,
                            RequestTransactions pgTransactions, int requests, int warmup, int runs) throws Exception {
        Server plain = server(null);
        Server sqlite = server(filter(sqliteStore).build());
        Server postgres = server(filter(pgStore).build());
        Server transactional = server(filter(pgStore).transactional(pgTransactions).build());
        try {
            URI[] targets = {uri(plain), uri(sqlite), uri(postgres), uri(transactional)};
            System.out.printf(Locale.ROOT, "%d timed rounds per run after %d warm-up rounds, %d runs, 1 client thread,"
                    + " loopback; jvm %s, %d cpus%n", requests, warmup, runs, System.getProperty("java.version"),
                    Runtime.getRuntime().availableProcessors());
            measure(client, targets, warmup);
            List<long[][]> results = new ArrayList<>();
            for (int run = 1; run <= runs; run++) {
                long[][] nanos = measure(client, targets, requests);
                results.add(nanos);
                print(run, nanos);
            }
            summary(results);
        } finally {
            for (Server s : new Server[] {plain, sqlite, postgres, transactional}) {
                s.stop();
            }
        }
    }

    private static IdempotencyFilter.Builder filter(JdbcIdempotencyStore store) {
        return IdempotencyFilter.builder(store).scopeResolver(ScopeResolver.bearerToken(API_KEY::equals));
    }

    private static Server server(Filter filter) throws Exception {
        Server server = new Server();
        ServerConnector connector = new ServerConnector(server);
        connector.setHost("127.0.0.1");
        connector.setPort(0);
        server.addConnector(connector);
        ServletContextHandler context = new ServletContextHandler();
        context.setContextPath("/");
        if (filter != null) {
            context.addFilter(new FilterHolder(filter), "/*", EnumSet.of(DispatcherType.REQUEST));
        }
        context.addServlet(new ServletHolder(new HttpServlet() {
            private static final long serialVersionUID = 1L;

            @Override
            protected void service(HttpServletRequest req, HttpServletResponse res) throws IOException {
                req.getInputStream().readAllBytes();
                res.setStatus(201);
                res.setContentType("application/json");
                res.setContentLength(RESPONSE.length);
                res.getOutputStream().write(RESPONSE);
            }
        }), "/*");
        server.setHandler(context);
        server.start();
        return server;
    }

    private static URI uri(Server server) {
        return URI.create("http://127.0.0.1:" + ((ServerConnector) server.getConnectors()[0]).getLocalPort() + "/orders");
    }

    /** {@code rounds} rounds; returns nanoseconds per configuration and round. */
    private static long[][] measure(HttpClient client, URI[] targets, int rounds) throws Exception {
        long[][] nanos = new long[Config.values().length][rounds];
        String previousSqlite = null;
        String previousPostgres = null;
        String first = UUID.randomUUID().toString();
        time(client, targets[1], first); // something to replay in round 0
        time(client, targets[2], first);
        previousSqlite = first;
        previousPostgres = first;
        for (int i = 0; i < rounds; i++) {
            String sqliteKey = UUID.randomUUID().toString();
            String postgresKey = UUID.randomUUID().toString();
            nanos[Config.BASELINE.ordinal()][i] = time(client, targets[0], UUID.randomUUID().toString());
            nanos[Config.SQLITE_FIRST.ordinal()][i] = time(client, targets[1], sqliteKey);
            nanos[Config.POSTGRES_FIRST.ordinal()][i] = time(client, targets[2], postgresKey);
            nanos[Config.POSTGRES_TX_FIRST.ordinal()][i] = time(client, targets[3], UUID.randomUUID().toString());
            nanos[Config.SQLITE_REPLAY.ordinal()][i] = time(client, targets[1], previousSqlite);
            nanos[Config.POSTGRES_REPLAY.ordinal()][i] = time(client, targets[2], previousPostgres);
            previousSqlite = sqliteKey;
            previousPostgres = postgresKey;
        }
        return nanos;
    }

    private static long time(HttpClient client, URI uri, String key) throws Exception {
        HttpRequest request = HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(20))
                .header("Content-Type", "application/json").header("Authorization", "Bearer " + API_KEY)
                .header("Idempotency-Key", key).POST(HttpRequest.BodyPublishers.ofByteArray(REQUEST)).build();
        long start = System.nanoTime();
        HttpResponse<byte[]> r = client.send(request, HttpResponse.BodyHandlers.ofByteArray());
        long elapsed = System.nanoTime() - start;
        if (r.statusCode() != 201) {
            throw new IllegalStateException("unexpected status " + r.statusCode() + " from " + uri);
        }
        return elapsed;
    }

    private static void print(int run, long[][] nanos) {
        System.out.printf(Locale.ROOT, "%nrun %d%n%-34s %9s %9s %9s %14s %9s%n", run, "configuration", "p50 ms", "p90 ms",
                "p99 ms", "added p50 ms", "x base");
        double base = pct(nanos[Config.BASELINE.ordinal()], 50);
        for (Config c : Config.values()) {
            long[] n = nanos[c.ordinal()];
            double p50 = pct(n, 50);
            System.out.printf(Locale.ROOT, "%-34s %9.3f %9.3f %9.3f %14s %9s%n", c.label, p50, pct(n, 90), pct(n, 99),
                    c == Config.BASELINE ? "" : String.format(Locale.ROOT, "%+.3f", p50 - base),
                    c == Config.BASELINE ? "" : String.format(Locale.ROOT, "%.2fx", p50 / base));
        }
    }

    /** Median over the runs of each configuration's added p50 and p50 ratio to the baseline, with min..max. */
    private static void summary(List<long[][]> results) {
        System.out.printf(Locale.ROOT, "%nover %d runs (median [min..max])%n%-34s %26s %24s%n", results.size(),
                "configuration", "added p50 ms", "p50 x baseline");
        for (Config c : Config.values()) {
            if (c == Config.BASELINE) {
                continue;
            }
            double[] added = new double[results.size()];
            double[] ratio = new double[results.size()];
            for (int r = 0; r < results.size(); r++) {
                double base = pct(results.get(r)[Config.BASELINE.ordinal()], 50);
                double p50 = pct(results.get(r)[c.ordinal()], 50);
                added[r] = p50 - base;
                ratio[r] = p50 / base;
            }
            System.out.printf(Locale.ROOT, "%-34s %26s %24s%n", c.label, spread(added, "%+.3f"), spread(ratio, "%.2fx"));
        }
    }

    private static String spread(double[] values, String format) {
        double[] sorted = values.clone();
        Arrays.sort(sorted);
        double median = sorted.length % 2 == 1 ? sorted[sorted.length / 2]
                : (sorted[sorted.length / 2 - 1] + sorted[sorted.length / 2]) / 2;
        return String.format(Locale.ROOT, format, median) + " [" + String.format(Locale.ROOT, format, sorted[0]) + ".."
                + String.format(Locale.ROOT, format, sorted[sorted.length - 1]) + "]";
    }

    /** The p-th percentile in milliseconds. */
    private static double pct(long[] nanos, int p) {
        long[] sorted = nanos.clone();
        Arrays.sort(sorted);
        int rank = (int) Math.ceil(p / 100.0 * sorted.length) - 1;
        return sorted[Math.max(0, rank)] / 1e6;
    }
}
