package dev.stagger.conformance;

import static dev.stagger.testsupport.http.FaultServer.status;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import dev.stagger.Backoff;
import dev.stagger.RetryPolicy;
import dev.stagger.http.HttpRetryEvent;
import dev.stagger.http.IdempotencyKeyMode;
import dev.stagger.http.RetryingHttpClient;
import dev.stagger.testing.VirtualClock;
import dev.stagger.testsupport.http.FaultServer;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.UnaryOperator;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Stagger's HTTP rules, the same for every client it supports ({@link Clients#ALL}), against one
 * scripted fault server on loopback: which statuses are retried, the waits, {@code Retry-After},
 * one {@code Idempotency-Key} on every attempt, no repeat of an unkeyed POST that may have been
 * processed, and no connection held after any case (the client's own pool where it can be read,
 * the server's count of open connections for all).
 */
class HttpRulesConformanceTest {
    private static final Duration WAIT = Duration.ofMillis(100);
    private static final String ERROR_BODY = "{\"error\":\"try again\",\"detail\":\"" + "x".repeat(2000) + "\"}";

    private FaultServer server;
    private final VirtualClock clock = new VirtualClock();
    private final List<HttpRetryEvent> retries = new CopyOnWriteArrayList<>();

    @BeforeEach
    void start() throws Exception {
        server = new FaultServer();
    }

    @AfterEach
    void stop() throws Exception {
        server.close();
    }

    static Stream<ClientUnderTest> clients() {
        return Clients.ALL.stream();
    }

    static Stream<Arguments> retriedStatuses() {
        return Clients.ALL.stream().flatMap(c -> Stream.of(408, 429, 500, 502, 503, 504).map(s -> Arguments.of(c, s)));
    }

    static Stream<Arguments> finalStatuses() {
        return Clients.ALL.stream().flatMap(c -> Stream.of(400, 401, 403, 404, 422).map(s -> Arguments.of(c, s)));
    }

    /** Three attempts, 100 ms apart without jitter, no budget (every case retries), events recorded. */
    private UnaryOperator<RetryingHttpClient.Builder> rules() {
        return b -> b.service("orders")
                .policy(RetryPolicy.builder().maxAttempts(3).backoff(Backoff.fixed(WAIT)).build())
                .withoutBudget()
                .httpListener(retries::add);
    }

    @ParameterizedTest(name = "{0} retries a GET answered {1}")
    @MethodSource("retriedStatuses")
    void retriesAGetAnsweredWithATransientStatus(ClientUnderTest client, int status) throws Exception {
        try (ClientUnderTest.Open http = client.open(clock, rules())) {
            server.then(status(status, ERROR_BODY));

            ClientUnderTest.Answer answer = http.send("GET", server.uri("/items"), null);

            assertThat(answer).isEqualTo(new ClientUnderTest.Answer(200, "ok"));
            assertThat(server.received()).hasSize(2);
            assertNoConnectionHeld(http);
        }
    }

    @ParameterizedTest(name = "{0} returns {1} at once")
    @MethodSource("finalStatuses")
    void returnsAStatusThatIsNotRetriedAfterOneAttempt(ClientUnderTest client, int status) throws Exception {
        try (ClientUnderTest.Open http = client.open(clock, rules())) {
            server.then(status(status, "no"));

            ClientUnderTest.Answer answer = http.send("GET", server.uri("/items"), null);

            assertThat(answer).isEqualTo(new ClientUnderTest.Answer(status, "no"));
            assertThat(server.received()).hasSize(1);
            assertThat(retries).isEmpty();
            assertNoConnectionHeld(http);
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("clients")
    void retriesA409OnlyForAnIdempotentRequest(ClientUnderTest client) throws Exception {
        try (ClientUnderTest.Open http = client.open(clock, rules().andThen(b -> b.idempotencyKeys(IdempotencyKeyMode.OFF))::apply)) {
            server.then(status(409, "conflict"));
            ClientUnderTest.Answer put = http.send("PUT", server.uri("/items/1"), "v2");
            server.then(status(409, "conflict"));
            ClientUnderTest.Answer post = http.send("POST", server.uri("/items"), "new");

            assertThat(put.status()).isEqualTo(200);
            assertThat(post.status()).isEqualTo(409);
            assertThat(server.received()).extracting(FaultServer.Received::method).containsExactly("PUT", "PUT", "POST");
            assertNoConnectionHeld(http);
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("clients")
    void waitsTheBackoffBetweenAttemptsAndGivesUpWithTheLastAnswer(ClientUnderTest client) throws Exception {
        try (ClientUnderTest.Open http = client.open(clock, rules())) {
            server.then(status(503, ERROR_BODY), status(503, ERROR_BODY), status(503, "still down"));

            ClientUnderTest.Answer answer = http.send("GET", server.uri("/items"), null);

            assertThat(answer).isEqualTo(new ClientUnderTest.Answer(503, "still down"));
            assertThat(retries).extracting(HttpRetryEvent::delay).containsExactly(WAIT, WAIT);
            assertThat(clock.now()).isGreaterThanOrEqualTo(WAIT.multipliedBy(2));
            assertNoConnectionHeld(http);
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("clients")
    void honoursRetryAfterAsTheLeastWait(ClientUnderTest client) throws Exception {
        try (ClientUnderTest.Open http = client.open(clock, rules())) {
            server.then(status(429, Map.of("Retry-After", "3"), "slow down"));

            ClientUnderTest.Answer answer = http.send("GET", server.uri("/items"), null);

            assertThat(answer.status()).isEqualTo(200);
            assertThat(retries).singleElement().satisfies(e -> assertThat(e.delay()).isGreaterThanOrEqualTo(Duration.ofSeconds(3)));
            assertThat(clock.now()).isGreaterThanOrEqualTo(Duration.ofSeconds(3));
            assertNoConnectionHeld(http);
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("clients")
    void sendsOneIdempotencyKeyOnEveryAttemptOfAPost(ClientUnderTest client) throws Exception {
        try (ClientUnderTest.Open http = client.open(clock, rules().andThen(b -> b.keysHonoured(uri -> true))::apply)) {
            server.then(status(503, ERROR_BODY), status(500, ERROR_BODY));

            ClientUnderTest.Answer answer = http.send("POST", server.uri("/payments"), "{\"amount\":5}");

            assertThat(answer.status()).isEqualTo(200);
            List<FaultServer.Received> received = server.received();
            assertThat(received).hasSize(3);
            assertThat(received).extracting(FaultServer.Received::body).containsOnly("{\"amount\":5}");
            assertThat(received).extracting(FaultServer.Received::attemptHeader).containsExactly("1", "2", "3");
            assertThat(received.get(0).idempotencyKey()).isNotBlank();
            assertThat(received).extracting(FaultServer.Received::idempotencyKey).containsOnly(received.get(0).idempotencyKey());
            assertNoConnectionHeld(http);
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("clients")
    void doesNotRepeatAnUnkeyedPostThatMayHaveBeenProcessed(ClientUnderTest client) throws Exception {
        try (ClientUnderTest.Open http = client.open(clock, rules().andThen(b -> b.idempotencyKeys(IdempotencyKeyMode.OFF))::apply)) {
            server.then(FaultServer.dropMidResponse(), status(500, "failed"));

            // most clients throw on the cut body; HttpURLConnection (under Feign) returns what arrived: either way, once
            catchThrowable(() -> http.send("POST", server.uri("/payments"), "{\"amount\":5}"));
            ClientUnderTest.Answer second = http.send("POST", server.uri("/payments"), "{\"amount\":6}");

            assertThat(second.status()).isEqualTo(500);
            assertThat(server.received()).extracting(FaultServer.Received::body)
                    .containsExactly("{\"amount\":5}", "{\"amount\":6}");
            assertThat(retries).isEmpty();
            assertNoConnectionHeld(http);
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("clients")
    void leavesRetryingToStaggerAloneEvenWhereTheLibraryWouldRetry(ClientUnderTest client) throws Exception {
        // Apache's default strategy retries a 503 with Retry-After, Feign's default retryer too (through its error
        // decoder): with one attempt allowed by Stagger, the request is sent once
        try (ClientUnderTest.Open http = client.open(clock, rules().andThen(b -> b.policy(RetryPolicy.builder().maxAttempts(1).build()))::apply)) {
            server.then(status(503, Map.of("Retry-After", "0"), "busy"));

            ClientUnderTest.Answer answer = http.send("GET", server.uri("/items"), null);

            assertThat(answer.status()).isEqualTo(503);
            assertThat(server.received()).hasSize(1);
            assertNoConnectionHeld(http);
        }
    }

    /**
     * Nothing holds a connection once the case is over: the client's pool has none leased, and the
     * server sees at most the one an idle keep-alive pool keeps (plus one closing), however many
     * responses were retried.
     */
    private void assertNoConnectionHeld(ClientUnderTest.Open http) {
        long giveUp = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        // an async client releases its connection just after completing the call; closes reach the server later still
        while ((http.connectionsInUse() > 0 || server.openConnections() > 2) && System.nanoTime() < giveUp) {
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(5));
        }
        assertThat(http.connectionsInUse()).as("connections the client's pool holds for unread responses").isZero();
        assertThat(server.openConnections()).as("connections open at the server").isLessThanOrEqualTo(2);
    }
}
