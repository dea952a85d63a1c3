package dev.stagger.idempotency.servlet;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.stagger.idempotency.JdbcIdempotencyStore;
import dev.stagger.idempotency.support.Http;
import dev.stagger.idempotency.support.TestServer;
import dev.stagger.testsupport.jdbc.PostgresCluster;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A real PostgreSQL restart while keyed requests run through two filter instances (two Jetty
 * servers, each with its own HikariCP pool) sharing that database. The server is a cluster of the
 * test's own on another port ({@link PostgresCluster}), stopped (cleanly, or as a crash), kept
 * down for five seconds (longer than the pools wait for a connection, so requests do fail), and
 * started again.
 *
 * <p>Clients send each order with its own key and retry it (alternating servers) on 409, 503 and
 * connection errors until they get the order's answer, as a client honouring the key would. The
 * test asserts that no order ran twice and that every order was answered once the database was
 * back; it prints how long after the restart requests succeeded again (not asserted: a timing).
 */
@Timeout(180)
class PostgresRestartTest {
    private static final int CLIENTS = 4;
    private static final Duration LEASE = Duration.ofSeconds(5);
    private static final long DOWN_MILLIS = 5_000;
    private static final long TRAFFIC_AFTER_RESTART_MILLIS = 8_000;

    private final Map<String, AtomicInteger> executions = new ConcurrentHashMap<>();
    private final Map<Integer, AtomicInteger> refusals = new ConcurrentHashMap<>();
    private final AtomicLong firstSuccessAfterRestart = new AtomicLong();
    private volatile long restartedAt;

    private static HikariDataSource pool(PostgresCluster pg, String name) {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(pg.url("connectTimeout=1", "socketTimeout=10"));
        config.setUsername("postgres");
        config.setPassword("");
        config.setMaximumPoolSize(4);
        config.setMinimumIdle(1);
        config.setConnectionTimeout(3_000);
        config.setValidationTimeout(500);
        config.setInitializationFailTimeout(-1);
        config.setPoolName(name);
        return new HikariDataSource(config);
    }

    @ParameterizedTest(name = "crash = {0}")
    @ValueSource(booleans = {false, true})
    void aDatabaseRestartUnderKeyedTrafficRunsNoRequestTwiceAndEveryRequestIsAnsweredAfterwards(boolean crash)
            throws Exception {
        try (PostgresCluster pg = PostgresCluster.start(Path.of("target/pg-clusters"));
             HikariDataSource poolA = pool(pg, "restart-a");
             HikariDataSource poolB = pool(pg, "restart-b")) {
            TestServer.Handler handler = (req, res) -> {
                String order = new String(req.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
                executions.computeIfAbsent(order, o -> new AtomicInteger()).incrementAndGet();
                res.setStatus(201);
                res.setContentType("application/json");
                res.getOutputStream().write(("{\"created\":" + order + "}").getBytes(StandardCharsets.UTF_8));
            };
            JdbcIdempotencyStore storeA = JdbcIdempotencyStore.builder(poolA).build();
            JdbcIdempotencyStore storeB = JdbcIdempotencyStore.builder(poolB).build();
            try (TestServer a = TestServer.start(handler, IdempotencyFilter.builder(storeA).lease(LEASE).build());
                 TestServer b = TestServer.start(handler, IdempotencyFilter.builder(storeB).lease(LEASE).build())) {
                List<URI> servers = List.of(a.uri("/orders"), b.uri("/orders"));
                AtomicBoolean stop = new AtomicBoolean();
                ExecutorService clients = Executors.newFixedThreadPool(CLIENTS);
                List<Future<Integer>> sent = new ArrayList<>();
                for (int c = 0; c < CLIENTS; c++) {
                    int client = c;
                    sent.add(clients.submit(() -> runClient(client, servers, stop)));
                }
                try {
                    Thread.sleep(1_500); // traffic before the restart
                    long stoppedAt = System.nanoTime();
                    pg.stop(crash);
                    Thread.sleep(DOWN_MILLIS);
                    pg.start();
                    restartedAt = System.nanoTime();
                    Thread.sleep(TRAFFIC_AFTER_RESTART_MILLIS);
                    stop.set(true);
                    int orders = 0;
                    for (Future<Integer> f : sent) {
                        orders += f.get(90, TimeUnit.SECONDS);
                    }

                    long recovered = firstSuccessAfterRestart.get();
                    System.out.printf("PostgreSQL %s under keyed traffic: %d orders by %d clients over 2 servers;"
                                    + " down %.1f s (stop to start); first request succeeded %s after the server was back;"
                                    + " transient answers on the way (status: count, -1 a connection error): %s%n",
                            crash ? "crash (immediate stop) and start" : "clean restart", orders, CLIENTS,
                            (restartedAt - stoppedAt) / 1e9,
                            recovered == 0 ? "never" : String.format("%.0f ms", (recovered - restartedAt) / 1e6),
                            refusals);
                    assertThat(recovered).as("a request succeeded after the restart").isNotZero();
                    assertThat(executions).hasSize(orders);
                    assertThat(executions.values()).as("no order ran twice").allSatisfy(n -> assertThat(n).hasValue(1));
                } finally {
                    stop.set(true);
                    clients.shutdownNow();
                    clients.awaitTermination(30, TimeUnit.SECONDS);
                }
            }
        }
    }

    /** Sends orders one after the other until told to stop, each retried until answered; returns how many. */
    private int runClient(int client, List<URI> servers, AtomicBoolean stop) throws Exception {
        int orders = 0;
        while (!stop.get()) {
            String order = "\"c" + client + "-" + orders + "\"";
            String key = "order-" + client + "-" + orders;
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            for (int attempt = 0; ; attempt++) {
                if (System.nanoTime() > deadline) {
                    throw new AssertionError("order " + key + " was not answered within 60 s");
                }
                int status;
                byte[] body;
                try {
                    HttpResponse<byte[]> r = Http.send(Http.post(servers.get(attempt % 2), key, "client-" + client, order));
                    status = r.statusCode();
                    body = r.body();
                } catch (IOException e) {
                    status = -1;
                    body = new byte[0];
                }
                if (status == 201) {
                    assertThat(new String(body, StandardCharsets.UTF_8)).isEqualTo("{\"created\":" + order + "}");
                    if (restartedAt != 0) {
                        firstSuccessAfterRestart.compareAndSet(0, System.nanoTime());
                    }
                    break;
                }
                assertThat(status).as("only transient answers while the database is away").isIn(-1, 409, 503);
                refusals.computeIfAbsent(status, k -> new AtomicInteger()).incrementAndGet();
                Thread.sleep(100); // a client's pause between retries, not a measured delay
            }
            orders++;
        }
        return orders;
    }
}
