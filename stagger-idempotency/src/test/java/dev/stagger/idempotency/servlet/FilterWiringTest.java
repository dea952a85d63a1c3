package dev.stagger.idempotency.servlet;

import static dev.stagger.idempotency.support.Http.post;
import static dev.stagger.idempotency.support.Http.send;
import static org.assertj.core.api.Assertions.assertThat;

import dev.stagger.idempotency.IdempotencyCompletion;
import dev.stagger.idempotency.IdempotencyListener;
import dev.stagger.idempotency.IdempotencyOutcome;
import dev.stagger.idempotency.JdbcIdempotencyStore;
import dev.stagger.idempotency.support.Http;
import dev.stagger.idempotency.support.TestServer;
import dev.stagger.jdbc.SqliteDataSource;
import dev.stagger.testing.VirtualClock;
import jakarta.servlet.Filter;
import jakarta.servlet.http.HttpServletResponse;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** What a service wires around the filter: API-key scopes, its own error format, a listener, request ids. */
class FilterWiringTest {
    private static final String ORDER = "{\"item\":\"book\"}";
    private static final String KEY_A = "sk_live_4eC39HqLyjWDarjtT1zdp7dc";
    private static final String KEY_B = "sk_live_9xQ2mHqLyjWDarjtT1zdp7zz";

    @TempDir
    Path dir;

    private final VirtualClock clock = new VirtualClock();
    private final AtomicInteger executions = new AtomicInteger();
    private JdbcIdempotencyStore store;
    private TestServer server;
    private volatile TestServer.Handler behaviour = (req, res) -> {
        req.getInputStream().readAllBytes();
        int n = executions.incrementAndGet();
        res.setStatus(201);
        res.setContentType("application/json");
        res.getOutputStream().write(("{\"order\":" + n + "}").getBytes(StandardCharsets.UTF_8));
    };

    @BeforeEach
    void setUp() {
        store = JdbcIdempotencyStore.builder(SqliteDataSource.file(dir.resolve("keys.db"))).clock(clock).build();
    }

    @AfterEach
    void stop() throws Exception {
        if (server != null) {
            server.close();
        }
        store.close();
    }

    private void start(UnaryOperator<IdempotencyFilter.Builder> config, Filter... ahead) throws Exception {
        Filter[] filters = java.util.Arrays.copyOf(ahead, ahead.length + 1);
        filters[ahead.length] = config.apply(IdempotencyFilter.builder(store)).build();
        server = TestServer.start((req, res) -> behaviour.handle(req, res), filters);
    }

    private HttpResponse<byte[]> withBearer(String apiKey, String idempotencyKey, String body) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(server.uri("/orders")).header("Content-Type", "application/json")
                .header("Idempotency-Key", idempotencyKey).POST(HttpRequest.BodyPublishers.ofString(body));
        if (apiKey != null) {
            b.header("Authorization", "Bearer " + apiKey);
        }
        return send(b.build());
    }

    private static String text(HttpResponse<byte[]> r) {
        return new String(r.body(), StandardCharsets.UTF_8);
    }

    // --- scope from a Bearer API key

    @Test
    void eachBearerApiKeyIsAScopeOfItsOwnAndAnUnknownKeyGetsNone() throws Exception {
        Set<String> issued = Set.of(KEY_A, KEY_B);
        start(b -> b.scopeResolver(ScopeResolver.bearerToken(issued::contains)));

        HttpResponse<byte[]> a = withBearer(KEY_A, "k-1", ORDER);
        HttpResponse<byte[]> b = withBearer(KEY_B, "k-1", ORDER);
        HttpResponse<byte[]> aAgain = withBearer(KEY_A, "k-1", ORDER);

        assertThat(executions).hasValue(2);
        assertThat(text(a)).isEqualTo("{\"order\":1}");
        assertThat(text(b)).isEqualTo("{\"order\":2}");
        assertThat(aAgain.headers().firstValue("Idempotent-Replayed")).contains("true");
        assertThat(text(aAgain)).isEqualTo(text(a));
        assertThat(withBearer("sk_live_not_issued", "k-1", ORDER).statusCode()).isEqualTo(400);
        assertThat(withBearer(null, "k-1", ORDER).statusCode()).isEqualTo(400);
        assertThat(executions).hasValue(2);
    }

    @Test
    void theApiKeyIsNeverWrittenToTheStoreInClear() throws Exception {
        start(b -> b.scopeResolver(ScopeResolver.bearerToken(KEY_A::equals)));
        withBearer(KEY_A, "k-1", ORDER);
        withBearer(KEY_A, "k-1", ORDER);
        store.close(); // every byte on disk

        StringBuilder onDisk = new StringBuilder();
        try (var files = Files.list(dir)) {
            for (Path f : files.toList()) {
                onDisk.append(new String(Files.readAllBytes(f), StandardCharsets.ISO_8859_1));
            }
        }
        assertThat(onDisk.toString()).contains("{\"order\":1}").doesNotContain(KEY_A).doesNotContain("4eC39HqLyjWD");
        store = JdbcIdempotencyStore.builder(SqliteDataSource.file(dir.resolve("keys.db"))).clock(clock).build();
    }

    @Test
    void malformedOrRepeatedAuthorizationHeadersNameNoClient() throws Exception {
        start(b -> b.scopeResolver(ScopeResolver.bearerToken(k -> true)));
        HttpRequest twoHeaders = HttpRequest.newBuilder(server.uri("/orders")).header("Idempotency-Key", "k-1")
                .header("Authorization", "Bearer " + KEY_A).header("Authorization", "Bearer " + KEY_B)
                .POST(HttpRequest.BodyPublishers.ofString(ORDER)).build();
        HttpRequest basic = HttpRequest.newBuilder(server.uri("/orders")).header("Idempotency-Key", "k-1")
                .header("Authorization", "Basic YWxpY2U6c2VjcmV0").POST(HttpRequest.BodyPublishers.ofString(ORDER)).build();

        assertThat(send(twoHeaders).statusCode()).isEqualTo(400);
        assertThat(send(basic).statusCode()).isEqualTo(400);
        assertThat(withBearer("has space", "k-1", ORDER).statusCode()).isEqualTo(400);
        assertThat(executions).hasValue(0);
    }

    // --- the service's own error format

    /** Stripe's shape: {"error": {"type": ..., "code": ..., "message": ...}}; a reused key is a 400 there. */
    private static final ErrorBodyWriter STRIPE_SHAPED = (outcome, request, response) -> {
        if (outcome == IdempotencyOutcome.KEY_REUSED) {
            response.setStatus(400);
        }
        response.setContentType("application/json");
        response.getWriter().write("{\"error\":{\"type\":\"idempotency_error\",\"code\":\""
                + outcome.name().toLowerCase(java.util.Locale.ROOT) + "\",\"message\":\"" + outcome + "\"}}");
    };

    @Test
    void anErrorBodyWriterShapesThe400And422InTheServicesOwnFormat() throws Exception {
        start(b -> b.errorBodyWriter(STRIPE_SHAPED));
        send(post(server.uri("/orders"), "k-1", "alice", ORDER));

        HttpResponse<byte[]> reused = send(post(server.uri("/orders"), "k-1", "alice", "{\"item\":\"piano\"}"));
        HttpResponse<byte[]> missing = send(post(server.uri("/orders"), null, "alice", ORDER));

        assertThat(reused.statusCode()).isEqualTo(400);
        assertThat(text(reused)).isEqualTo("{\"error\":{\"type\":\"idempotency_error\",\"code\":\"key_reused\","
                + "\"message\":\"KEY_REUSED\"}}");
        assertThat(reused.headers().firstValue("Content-Type").orElseThrow()).startsWith("application/json");
        assertThat(missing.statusCode()).isEqualTo(400);
        assertThat(text(missing)).contains("\"code\":\"key_missing\"");
    }

    @Test
    void anErrorBodyWriterKeepsThe409AndItsRetryAfter() throws Exception {
        CountDownLatch entered = new CountDownLatch(1);
        CountDownLatch finish = new CountDownLatch(1);
        TestServer.Handler normal = behaviour;
        behaviour = (req, res) -> {
            entered.countDown();
            await(finish);
            normal.handle(req, res);
        };
        start(b -> b.errorBodyWriter(STRIPE_SHAPED).retryAfter(Duration.ofSeconds(2)));
        CompletableFuture<HttpResponse<byte[]>> first = Http.CLIENT.sendAsync(post(server.uri("/orders"), "k-1", "alice", ORDER),
                HttpResponse.BodyHandlers.ofByteArray());
        assertThat(entered.await(10, TimeUnit.SECONDS)).isTrue();

        HttpResponse<byte[]> conflict = send(post(server.uri("/orders"), "k-1", "alice", ORDER));
        finish.countDown();

        assertThat(conflict.statusCode()).isEqualTo(409);
        assertThat(conflict.headers().firstValue("Retry-After")).contains("2");
        assertThat(text(conflict)).contains("\"code\":\"in_flight\"");
        assertThat(first.get(10, TimeUnit.SECONDS).statusCode()).isEqualTo(201);
    }

    // --- the listener

    private record Event(String what, String method, String route, int status) {
    }

    private final List<Event> events = new CopyOnWriteArrayList<>();
    private final IdempotencyListener recording = new IdempotencyListener() {
        @Override
        public void decided(IdempotencyOutcome outcome, String method, String route) {
            events.add(new Event(outcome.name(), method, route, 0));
        }

        @Override
        public void completed(IdempotencyCompletion completion, String method, String route, int status) {
            events.add(new Event(completion.name(), method, route, status));
        }
    };

    @Test
    void theListenerHearsFirstExecutionsReplaysConflictsAndWhatBecameOfEachResponse() throws Exception {
        start(b -> b.idempotencyListener(recording));

        send(post(server.uri("/orders"), "k-1", "alice", ORDER));
        send(post(server.uri("/orders"), "k-1", "alice", ORDER));
        send(post(server.uri("/orders"), "k-1", "alice", "{\"item\":\"piano\"}"));
        send(post(server.uri("/orders"), null, "alice", ORDER));
        send(post(server.uri("/orders"), "k-2", null, ORDER));

        assertThat(events).containsExactly(
                new Event("EXECUTED", "POST", "/orders", 0),
                new Event("STORED", "POST", "/orders", 201),
                new Event("REPLAYED", "POST", "/orders", 0),
                new Event("KEY_REUSED", "POST", "/orders", 0),
                new Event("KEY_MISSING", "POST", "/orders", 0),
                new Event("NO_CLIENT_SCOPE", "POST", "/orders", 0));
    }

    @Test
    void theListenerHearsTheInFlightConflictTheTakeoverAndTheLostLease() throws Exception {
        CountDownLatch entered = new CountDownLatch(1);
        CountDownLatch finish = new CountDownLatch(1);
        TestServer.Handler normal = behaviour;
        AtomicInteger entrants = new AtomicInteger();
        behaviour = (req, res) -> {
            if (entrants.incrementAndGet() == 1) {
                entered.countDown();
                await(finish);
            }
            normal.handle(req, res);
        };
        start(b -> b.idempotencyListener(recording).lease(Duration.ofSeconds(60)));
        CompletableFuture<HttpResponse<byte[]>> slow = Http.CLIENT.sendAsync(post(server.uri("/orders"), "k-1", "alice", ORDER),
                HttpResponse.BodyHandlers.ofByteArray());
        assertThat(entered.await(10, TimeUnit.SECONDS)).isTrue();
        assertThat(send(post(server.uri("/orders"), "k-1", "alice", ORDER)).statusCode()).isEqualTo(409);

        clock.advance(Duration.ofSeconds(60));
        assertThat(send(post(server.uri("/orders"), "k-1", "alice", ORDER)).statusCode()).isEqualTo(201);
        finish.countDown();
        assertThat(slow.get(10, TimeUnit.SECONDS).statusCode()).isEqualTo(201);

        assertThat(events).extracting(Event::what).containsExactly(
                "EXECUTED", "IN_FLIGHT", "TOOK_OVER", "STORED", "LEASE_LOST");
    }

    @Test
    void theListenerHearsServerErrorsReleasedAndHandlerFailures() throws Exception {
        behaviour = (req, res) -> {
            if (req.getRequestURI().endsWith("/boom")) {
                throw new IllegalStateException("handler failed");
            }
            if (req.getRequestURI().endsWith("/busy")) {
                res.setStatus(503);
                res.getWriter().write("try later");
                return;
            }
            res.sendError(503);
        };
        start(b -> b.idempotencyListener(recording));

        send(post(server.uri("/orders/busy"), "k-1", "alice", ORDER));
        send(post(server.uri("/orders"), "k-2", "alice", ORDER));
        send(post(server.uri("/orders/boom"), "k-3", "alice", ORDER));

        assertThat(events).extracting(Event::what)
                .containsExactly("EXECUTED", "RELEASED", "EXECUTED", "NOT_STORED", "EXECUTED", "FAILED");
        assertThat(events.get(1).status()).isEqualTo(503);
    }

    @Test
    void aListenerThatThrowsChangesNoAnswer() throws Exception {
        start(b -> b.idempotencyListener(new IdempotencyListener() {
            @Override
            public void decided(IdempotencyOutcome outcome, String method, String route) {
                throw new IllegalStateException("listener bug");
            }

            @Override
            public void completed(IdempotencyCompletion completion, String method, String route, int status) {
                throw new IllegalStateException("listener bug");
            }
        }));

        assertThat(send(post(server.uri("/orders"), "k-1", "alice", ORDER)).statusCode()).isEqualTo(201);
        assertThat(send(post(server.uri("/orders"), "k-1", "alice", ORDER)).headers().firstValue("Idempotent-Replayed"))
                .contains("true");
        assertThat(executions).hasValue(1);
    }

    // --- request ids

    @Test
    void aReplayCarriesTheRequestIdOfTheOriginalInsteadOfTheRepeatsOwn() throws Exception {
        AtomicInteger ids = new AtomicInteger();
        Filter requestIds = (req, res, chain) -> {
            ((HttpServletResponse) res).setHeader("Request-Id", "req_" + ids.incrementAndGet());
            chain.doFilter(req, res);
        };
        start(b -> b, requestIds);

        HttpResponse<byte[]> first = send(post(server.uri("/orders"), "k-1", "alice", ORDER));
        HttpResponse<byte[]> replay = send(post(server.uri("/orders"), "k-1", "alice", ORDER));

        assertThat(first.headers().allValues("Request-Id")).containsExactly("req_1");
        assertThat(replay.headers().firstValue("Idempotent-Replayed")).contains("true");
        assertThat(replay.headers().allValues("Request-Id")).containsExactly("req_1");
    }

    private static void await(CountDownLatch latch) {
        try {
            latch.await(20, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
