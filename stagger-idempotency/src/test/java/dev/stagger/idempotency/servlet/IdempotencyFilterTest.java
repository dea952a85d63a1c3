package dev.stagger.idempotency.servlet;

import static dev.stagger.idempotency.support.Http.post;
import static dev.stagger.idempotency.support.Http.send;
import static org.assertj.core.api.Assertions.assertThat;

import dev.stagger.idempotency.JdbcIdempotencyStore;
import dev.stagger.idempotency.support.Http;
import dev.stagger.idempotency.support.TestServer;
import dev.stagger.jdbc.SqliteDataSource;
import dev.stagger.testing.VirtualClock;
import jakarta.servlet.ServletException;
import java.io.IOException;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The filter's HTTP semantics, on a real Jetty over a real SQLite file. */
class IdempotencyFilterTest {
    private static final String ORDER = "{\"item\":\"book\",\"qty\":1}";

    @TempDir
    Path dir;

    private final VirtualClock clock = new VirtualClock();
    private final AtomicInteger executions = new AtomicInteger();
    private JdbcIdempotencyStore store;
    private TestServer server;
    private volatile TestServer.Handler behaviour = this::createOrder;

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

    private void start(UnaryOperator<IdempotencyFilter.Builder> config) throws Exception {
        server = TestServer.start((req, res) -> behaviour.handle(req, res), config.apply(IdempotencyFilter.builder(store)).build());
    }

    private void start() throws Exception {
        start(b -> b);
    }

    private void createOrder(jakarta.servlet.http.HttpServletRequest req, jakarta.servlet.http.HttpServletResponse res)
            throws IOException {
        String body = new String(req.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        int id = executions.incrementAndGet();
        res.setStatus(201);
        res.setContentType("application/json");
        res.setHeader("Location", "/orders/" + id);
        res.setHeader("Set-Cookie", "session=secret" + id);
        res.getOutputStream().write(("{\"order\":" + id + ",\"request\":" + body + "}").getBytes(StandardCharsets.UTF_8));
    }

    private HttpResponse<byte[]> order(String key, String user, String json) throws Exception {
        return send(post(server.uri("/orders"), key, user, json));
    }

    private static String text(HttpResponse<byte[]> r) {
        return new String(r.body(), StandardCharsets.UTF_8);
    }

    private static void assertProblem(HttpResponse<byte[]> r, int status, String type) {
        assertThat(r.statusCode()).isEqualTo(status);
        assertThat(r.headers().firstValue("Content-Type")).contains("application/problem+json");
        assertThat(text(r)).contains("\"type\":\"urn:stagger:idempotency:" + type + "\"").contains("\"status\":" + status);
    }

    @Test
    void theFirstRequestRunsTheHandlerAndIsNotMarkedAsReplayed() throws Exception {
        start();
        HttpResponse<byte[]> r = order("k-1", "alice", ORDER);

        assertThat(r.statusCode()).isEqualTo(201);
        assertThat(text(r)).isEqualTo("{\"order\":1,\"request\":" + ORDER + "}");
        assertThat(r.headers().firstValue("Idempotent-Replayed")).isEmpty();
        assertThat(executions).hasValue(1);
    }

    @Test
    void aRepeatIsReplayedByteForByteWithoutRunningTheHandler() throws Exception {
        start();
        HttpResponse<byte[]> first = order("k-1", "alice", ORDER);
        HttpResponse<byte[]> again = order("\"k-1\"", "alice", ORDER);

        assertThat(executions).hasValue(1);
        assertThat(again.statusCode()).isEqualTo(first.statusCode());
        assertThat(again.body()).isEqualTo(first.body());
        assertThat(again.headers().firstValue("Content-Type")).isEqualTo(first.headers().firstValue("Content-Type"));
        assertThat(again.headers().firstValue("Location")).contains("/orders/1");
        assertThat(again.headers().firstValue("Idempotent-Replayed")).contains("true");
    }

    @Test
    void cookiesAndOtherPerSessionHeadersAreNeverReplayed() throws Exception {
        start();
        order("k-1", "alice", ORDER);
        HttpResponse<byte[]> again = order("k-1", "alice", ORDER);

        assertThat(again.headers().allValues("Set-Cookie")).isEmpty();
    }

    @Test
    void theSameKeyWithADifferentBodyGets422AndTheHandlerDoesNotRun() throws Exception {
        start();
        order("k-1", "alice", ORDER);
        HttpResponse<byte[]> r = order("k-1", "alice", "{\"item\":\"book\",\"qty\":100}");

        assertProblem(r, 422, "key-reused");
        assertThat(executions).hasValue(1);
    }

    @Test
    void aPostWithoutAKeyGets400AndTheHandlerDoesNotRun() throws Exception {
        start();
        assertProblem(order(null, "alice", ORDER), 400, "key-missing");
        assertThat(executions).hasValue(0);
    }

    @Test
    void twoKeyHeadersAreInvalid() throws Exception {
        start();
        HttpRequest twoKeys = HttpRequest.newBuilder(server.uri("/orders")).header("Idempotency-Key", "a")
                .header("Idempotency-Key", "b").header(TestServer.USER_HEADER, "alice")
                .POST(HttpRequest.BodyPublishers.ofString(ORDER)).build();

        assertProblem(send(twoKeys), 400, "key-invalid");
    }

    @Test
    void aKeyOf256CharactersGets400() throws Exception {
        start();
        assertProblem(order("a".repeat(256), "alice", ORDER), 400, "key-invalid");
        assertThat(order("a".repeat(255), "alice", ORDER).statusCode()).isEqualTo(201);
    }

    @ParameterizedTest
    @ValueSource(strings = {"\"unterminated", "quo\"te", "\"a\"b\"", "x' OR '1'='1", "k; DROP TABLE stagger_idempotency; --",
        "tab\there", "back\\slash", "%00null", "<script>alert(1)</script>"})
    void hostileKeysGet400AndNothingIsStored(String key) throws Exception {
        start();
        assertProblem(order(key, "alice", ORDER), 400, "key-invalid");
        assertThat(executions).hasValue(0);
        assertThat(store.count()).isZero();
    }

    @Test
    void aTenKilobyteKeyGets400AndNothingIsStored() throws Exception {
        start();
        assertProblem(order("k".repeat(10_240), "alice", ORDER), 400, "key-invalid");
        assertThat(store.count()).isZero();
    }

    @Test
    void aControlCharacterInAKeyNeverReachesTheStore() throws Exception {
        start();
        // java.net.http refuses to send control characters, so the header goes through a raw socket
        String raw = "POST /orders HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Test-User: alice\r\nContent-Type: application/json\r\n"
                + "Idempotency-Key: abc\u0001def\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}";
        String reply;
        try (java.net.Socket s = new java.net.Socket(server.uri("/").getHost(), server.uri("/").getPort())) {
            s.getOutputStream().write(raw.getBytes(StandardCharsets.ISO_8859_1));
            reply = new String(s.getInputStream().readAllBytes(), StandardCharsets.ISO_8859_1);
        }
        assertThat(reply).startsWith("HTTP/1.1 400");
        assertThat(executions).hasValue(0);
        assertThat(store.count()).isZero();
    }

    @Test
    void anotherPrincipalSendingTheSameKeyAndBodyGetsItsOwnExecution() throws Exception {
        start();
        HttpResponse<byte[]> alice = order("shared-key", "alice", ORDER);
        HttpResponse<byte[]> bob = order("shared-key", "bob", ORDER);

        assertThat(executions).hasValue(2);
        assertThat(bob.statusCode()).isEqualTo(201);
        assertThat(bob.headers().firstValue("Idempotent-Replayed")).isEmpty();
        assertThat(text(bob)).contains("\"order\":2").doesNotContain("\"order\":1");
        assertThat(text(alice)).contains("\"order\":1");
        assertThat(text(order("shared-key", "bob", ORDER))).isEqualTo(text(bob));
    }

    @Test
    void aKeyWithoutPrincipalOrResolverAnswerGets400AndNoSharedAnonymousScope() throws Exception {
        start();
        assertProblem(order("k-1", null, ORDER), 400, "no-client-scope");
        assertThat(executions).hasValue(0);
        assertThat(store.count()).isZero();
    }

    @Test
    void aScopeResolverGivesUnauthenticatedClientsTheirOwnScope() throws Exception {
        start(b -> b.scopeResolver(req -> Optional.ofNullable(req.getHeader("X-Verified-Client"))));
        HttpRequest fromA = HttpRequest.newBuilder(server.uri("/orders")).header("Idempotency-Key", "k-1")
                .header("X-Verified-Client", "client-a").POST(HttpRequest.BodyPublishers.ofString(ORDER)).build();
        HttpRequest fromB = HttpRequest.newBuilder(server.uri("/orders")).header("Idempotency-Key", "k-1")
                .header("X-Verified-Client", "client-b").POST(HttpRequest.BodyPublishers.ofString(ORDER)).build();

        send(fromA);
        send(fromB);
        HttpResponse<byte[]> againA = send(fromA);

        assertThat(executions).hasValue(2);
        assertThat(againA.headers().firstValue("Idempotent-Replayed")).contains("true");
    }

    @Test
    void aRepeatWhileTheFirstRunsGets409WithRetryAfter() throws Exception {
        CountDownLatch entered = new CountDownLatch(1);
        CountDownLatch finish = new CountDownLatch(1);
        behaviour = (req, res) -> {
            entered.countDown();
            try {
                finish.await(10, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            createOrder(req, res);
        };
        start();
        CompletableFuture<HttpResponse<byte[]>> first = Http.CLIENT.sendAsync(post(server.uri("/orders"), "k-1", "alice", ORDER),
                HttpResponse.BodyHandlers.ofByteArray());
        assertThat(entered.await(10, TimeUnit.SECONDS)).isTrue();

        HttpResponse<byte[]> conflict = order("k-1", "alice", ORDER);
        finish.countDown();

        assertProblem(conflict, 409, "in-flight");
        assertThat(conflict.headers().firstValue("Retry-After")).contains("1");
        assertThat(first.get(10, TimeUnit.SECONDS).statusCode()).isEqualTo(201);
        assertThat(order("k-1", "alice", ORDER).headers().firstValue("Idempotent-Replayed")).contains("true");
    }

    @Test
    void aServerErrorReleasesTheKeySoTheRetryRunsAgain() throws Exception {
        behaviour = (req, res) -> {
            if (executions.incrementAndGet() == 1) {
                res.setStatus(503);
                res.getWriter().write("down");
                return;
            }
            res.setStatus(201);
            res.getWriter().write("created");
        };
        start();

        assertThat(order("k-1", "alice", ORDER).statusCode()).isEqualTo(503);
        HttpResponse<byte[]> retry = order("k-1", "alice", ORDER);

        assertThat(retry.statusCode()).isEqualTo(201);
        assertThat(retry.headers().firstValue("Idempotent-Replayed")).isEmpty();
        assertThat(executions).hasValue(2);
    }

    @Test
    void withStoreServerErrorsA500IsReplayedLikeAnyResponse() throws Exception {
        behaviour = (req, res) -> {
            executions.incrementAndGet();
            res.setStatus(500);
            res.getWriter().write("failed once");
        };
        start(b -> b.storeServerErrors(true));

        order("k-1", "alice", ORDER);
        HttpResponse<byte[]> retry = order("k-1", "alice", ORDER);

        assertThat(retry.statusCode()).isEqualTo(500);
        assertThat(text(retry)).isEqualTo("failed once");
        assertThat(retry.headers().firstValue("Idempotent-Replayed")).contains("true");
        assertThat(executions).hasValue(1);
    }

    @ParameterizedTest(name = "status {0}")
    @ValueSource(ints = {429, 503})
    void aRefusalIsNeverStoredEvenWhenServerErrorsAre(int status) throws Exception {
        behaviour = (req, res) -> {
            if (executions.incrementAndGet() == 1) {
                res.setStatus(status);
                res.setHeader("Retry-After", "1");
                return;
            }
            res.setStatus(201);
        };
        start(b -> b.storeServerErrors(true));

        assertThat(order("k-1", "alice", ORDER).statusCode()).isEqualTo(status);
        HttpResponse<byte[]> retry = order("k-1", "alice", ORDER);

        assertThat(retry.statusCode()).isEqualTo(201);
        assertThat(retry.headers().firstValue("Idempotent-Replayed")).isEmpty();
        assertThat(executions).hasValue(2);
    }

    @Test
    void anExceptionFromTheHandlerReleasesTheKey() throws Exception {
        behaviour = (req, res) -> {
            if (executions.incrementAndGet() == 1) {
                throw new ServletException("database timeout");
            }
            res.setStatus(201);
        };
        start();

        assertThat(order("k-1", "alice", ORDER).statusCode()).isEqualTo(500);
        assertThat(store.count()).isZero();
        assertThat(order("k-1", "alice", ORDER).statusCode()).isEqualTo(201);
        assertThat(executions).hasValue(2);
    }

    @Test
    void aClientErrorFromTheHandlerIsStoredBecauseTheHandlerRan() throws Exception {
        behaviour = (req, res) -> {
            executions.incrementAndGet();
            res.setStatus(409);
            res.getWriter().write("out of stock");
        };
        start();

        order("k-1", "alice", ORDER);
        HttpResponse<byte[]> again = order("k-1", "alice", ORDER);

        assertThat(again.statusCode()).isEqualTo(409);
        assertThat(again.headers().firstValue("Idempotent-Replayed")).contains("true");
        assertThat(executions).hasValue(1);
    }

    @Test
    void aResponseLargerThanTheLimitIsSentInFullButNotStored() throws Exception {
        byte[] big = new byte[64 * 1024];
        java.util.Arrays.fill(big, (byte) 'x');
        behaviour = (req, res) -> {
            executions.incrementAndGet();
            res.setStatus(200);
            for (int i = 0; i < big.length; i += 1000) {
                res.getOutputStream().write(big, i, Math.min(1000, big.length - i));
            }
        };
        start(b -> b.maxStoredBodySize(10_000));

        HttpResponse<byte[]> first = order("k-1", "alice", ORDER);
        HttpResponse<byte[]> second = order("k-1", "alice", ORDER);

        assertThat(first.body()).isEqualTo(big);
        assertThat(second.body()).isEqualTo(big);
        assertThat(second.headers().firstValue("Idempotent-Replayed")).isEmpty();
        assertThat(executions).hasValue(2);
        assertThat(store.count()).isZero();
    }

    @Test
    void aRequestBodyOverTheLimitGets413AndTheHandlerDoesNotRun() throws Exception {
        start(b -> b.maxRequestBodySize(16));
        assertProblem(order("k-1", "alice", ORDER), 413, "body-too-large");
        assertThat(executions).hasValue(0);
    }

    @Test
    void aHandlerThatNeverReturnedIsTakenOverOnceTheLeaseExpires() throws Exception {
        CountDownLatch hung = new CountDownLatch(1);
        CountDownLatch unblock = new CountDownLatch(1);
        behaviour = (req, res) -> {
            if (executions.incrementAndGet() == 1) {
                hung.countDown();
                try {
                    unblock.await(30, TimeUnit.SECONDS); // the simulated dead server: never answers in time
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                return;
            }
            res.setStatus(201);
            res.getWriter().write("order from the takeover");
        };
        start(b -> b.lease(Duration.ofSeconds(60)));
        CompletableFuture<HttpResponse<byte[]>> dead = Http.CLIENT.sendAsync(post(server.uri("/orders"), "k-1", "alice", ORDER),
                HttpResponse.BodyHandlers.ofByteArray());
        assertThat(hung.await(10, TimeUnit.SECONDS)).isTrue();
        assertThat(order("k-1", "alice", ORDER).statusCode()).isEqualTo(409);

        clock.advance(Duration.ofSeconds(60));
        HttpResponse<byte[]> takeover = order("k-1", "alice", ORDER);

        assertThat(takeover.statusCode()).isEqualTo(201);
        assertThat(text(takeover)).isEqualTo("order from the takeover");
        assertThat(executions).hasValue(2);
        unblock.countDown();
        dead.get(10, TimeUnit.SECONDS);
        assertThat(order("k-1", "alice", ORDER).body()).isEqualTo(takeover.body());
    }

    @Test
    void expiredRecordsArePurgedAndTheKeyThenRunsAfresh() throws Exception {
        start(b -> b.expiry(Duration.ofHours(24)));
        order("k-1", "alice", ORDER);
        order("k-2", "alice", ORDER);
        clock.advance(Duration.ofHours(23));
        order("k-3", "alice", ORDER);
        clock.advance(Duration.ofHours(1));

        assertThat(store.purgeAllExpired(1)).isEqualTo(2);
        assertThat(store.count()).isEqualTo(1);
        assertThat(order("k-1", "alice", ORDER).headers().firstValue("Idempotent-Replayed")).isEmpty();
        assertThat(order("k-3", "alice", ORDER).headers().firstValue("Idempotent-Replayed")).contains("true");
        assertThat(executions).hasValue(4);
    }

    @Test
    void getRequestsPassThroughUnbufferedAndStreamBeforeTheHandlerFinishes() throws Exception {
        CountDownLatch firstChunkSeen = new CountDownLatch(1);
        behaviour = (req, res) -> {
            res.setStatus(200);
            res.getOutputStream().write("first\n".getBytes(StandardCharsets.UTF_8));
            res.flushBuffer();
            try {
                // the second chunk only comes after the client has read the first one
                assertThat(firstChunkSeen.await(10, TimeUnit.SECONDS)).isTrue();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            res.getOutputStream().write("second\n".getBytes(StandardCharsets.UTF_8));
        };
        start();
        HttpResponse<java.io.InputStream> r = Http.CLIENT.send(HttpRequest.newBuilder(server.uri("/events"))
                .header(TestServer.USER_HEADER, "alice").GET().build(), HttpResponse.BodyHandlers.ofInputStream());
        java.io.BufferedReader lines = new java.io.BufferedReader(new java.io.InputStreamReader(r.body(), StandardCharsets.UTF_8));

        assertThat(lines.readLine()).isEqualTo("first");
        firstChunkSeen.countDown();
        assertThat(lines.readLine()).isEqualTo("second");
        assertThat(store.count()).isZero();
    }

    @Test
    void aPerRouteRequirementCanMakeAKeyOptional() throws Exception {
        start(b -> b.keyRequirement((method, route) -> route.startsWith("/search") ? KeyPolicy.OPTIONAL
                : KeyRequirement.defaults().policy(method, route)));

        assertThat(send(post(server.uri("/search"), null, "alice", ORDER)).statusCode()).isEqualTo(201);
        assertProblem(order(null, "alice", ORDER), 400, "key-missing");
    }

    @Test
    void formParametersStayReadableAfterTheBodyWasFingerprinted() throws Exception {
        behaviour = (req, res) -> {
            executions.incrementAndGet();
            res.setStatus(200);
            res.setCharacterEncoding("UTF-8");
            res.getWriter().write(req.getParameter("item") + "/" + req.getParameter("page"));
        };
        start();
        HttpRequest form = HttpRequest.newBuilder(server.uri("/orders?page=2")).header("Idempotency-Key", "k-1")
                .header(TestServer.USER_HEADER, "alice").header("Content-Type", "application/x-www-form-urlencoded")
                .POST(HttpRequest.BodyPublishers.ofString("item=b%C3%BCcher")).build();

        assertThat(text(send(form))).isEqualTo("b\u00fccher/2");
    }

    @Test
    void aRedirectIsStoredAndReplayedWithItsLocation() throws Exception {
        behaviour = (req, res) -> {
            executions.incrementAndGet();
            res.sendRedirect("/orders/7");
        };
        start();

        HttpResponse<byte[]> first = order("k-1", "alice", ORDER);
        HttpResponse<byte[]> again = order("k-1", "alice", ORDER);

        assertThat(first.statusCode()).isEqualTo(302);
        assertThat(again.statusCode()).isEqualTo(302);
        assertThat(again.headers().firstValue("Location")).isEqualTo(first.headers().firstValue("Location"));
        assertThat(again.headers().firstValue("Idempotent-Replayed")).contains("true");
        assertThat(executions).hasValue(1);
    }

    @Test
    void aResponseSentWithSendErrorReachesTheClientAndReleasesTheKey() throws Exception {
        behaviour = (req, res) -> {
            executions.incrementAndGet();
            res.sendError(404, "no such customer");
        };
        start();

        assertThat(order("k-1", "alice", ORDER).statusCode()).isEqualTo(404);
        assertThat(store.count()).isZero();
        assertThat(order("k-1", "alice", ORDER).statusCode()).isEqualTo(404);
        assertThat(executions).hasValue(2);
    }

    @Test
    void whenTheStoreIsDownTheHandlerDoesNotRunAndTheClientGets503() throws Exception {
        dev.stagger.idempotency.IdempotencyStore down = new dev.stagger.idempotency.IdempotencyStore() {
            private dev.stagger.jdbc.StoreException failure() {
                return new dev.stagger.jdbc.StoreException("database unreachable",
                        new java.sql.SQLException("connection refused"));
            }

            @Override
            public dev.stagger.idempotency.Claim claim(dev.stagger.idempotency.IdempotencyScope scope,
                    dev.stagger.idempotency.RequestFingerprint fingerprint, Duration lease, Duration expiry) {
                throw failure();
            }

            @Override
            public boolean complete(dev.stagger.idempotency.IdempotencyScope scope, String leaseToken,
                    dev.stagger.idempotency.StoredResponse response, Duration expiry) {
                throw failure();
            }

            @Override
            public boolean release(dev.stagger.idempotency.IdempotencyScope scope, String leaseToken) {
                throw failure();
            }

            @Override
            public Optional<dev.stagger.idempotency.IdempotencyRecord> find(dev.stagger.idempotency.IdempotencyScope scope) {
                throw failure();
            }

            @Override
            public int purgeExpired(int batchSize) {
                throw failure();
            }
        };
        server = TestServer.start((req, res) -> behaviour.handle(req, res), IdempotencyFilter.builder(down).build());

        HttpResponse<byte[]> r = order("k-1", "alice", ORDER);

        assertProblem(r, 503, "store-unavailable");
        assertThat(r.headers().firstValue("Retry-After")).contains("1");
        assertThat(executions).hasValue(0);
    }

    @Test
    void anExpiryNoLongerThanTheLeaseIsRefusedBecauseItWouldFreeAKeyStillInFlight() {
        // a record past its expiry counts as absent, so a repeat would run while the first request still runs
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> IdempotencyFilter.builder(store)
                        .lease(Duration.ofSeconds(60)).expiry(Duration.ofSeconds(30)).build())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("expiry").hasMessageContaining("PT30S");
    }

    @Test
    void theBuilderNamesTheBadFieldAndValue() {
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> IdempotencyFilter.builder(store).lease(Duration.ZERO))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("lease").hasMessageContaining("PT0S");
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> IdempotencyFilter.builder(store).maxStoredBodySize(-1))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("maxStoredBodySize");
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> IdempotencyFilter.builder(store)
                        .storedHeaders(java.util.List.of("Bad Header")))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("storedHeaders");
    }
}
