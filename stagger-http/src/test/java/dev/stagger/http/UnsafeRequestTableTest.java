package dev.stagger.http;

import static org.assertj.core.api.Assertions.assertThat;

import dev.stagger.RetryPolicy;
import dev.stagger.testing.VirtualClock;
import dev.stagger.testsupport.Await;
import dev.stagger.testsupport.http.FaultServer;
import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Method x key mode x caller key x whether the server honours keys x outcome, against a real
 * server on loopback: a request that is not safe to send twice (neither idempotent nor keyed for a
 * server that honours keys) is sent again only after an outcome that shows it was not processed.
 */
class UnsafeRequestTableTest {
    private static final Set<String> IDEMPOTENT = Set.of("GET", "PUT");
    private static final AtomicInteger ROW = new AtomicInteger();
    private static FaultServer server;

    enum Outcome {
        CONNECT_REFUSED(true), S429(true), S503(true), S408(true),
        S500(false), S502(false), S504(false), TIMEOUT(false), RESET(false);

        /** True when the outcome shows the server did not process the request. */
        final boolean notProcessed;

        Outcome(boolean notProcessed) {
            this.notProcessed = notProcessed;
        }

        FaultServer.Step step() {
            return switch (this) {
                case TIMEOUT -> server.stall(200);
                case RESET -> FaultServer.dropMidResponse();
                default -> FaultServer.status(Integer.parseInt(name().substring(1)), "no");
            };
        }
    }

    @BeforeAll
    static void start() throws Exception {
        server = new FaultServer();
    }

    @AfterAll
    static void stop() throws Exception {
        server.close();
    }

    /** The rule under test, written out: when is the second attempt sent? */
    static boolean retried(String method, IdempotencyKeyMode mode, boolean callerKey, boolean honoured,
                           Outcome outcome) {
        boolean idempotent = IDEMPOTENT.contains(method);
        boolean keyed = callerKey || mode == IdempotencyKeyMode.AUTO && !idempotent;
        if (outcome == Outcome.CONNECT_REFUSED) {
            return true; // nothing was sent
        }
        if (idempotent || keyed && honoured) {
            return true; // safe to send twice
        }
        if (mode == IdempotencyKeyMode.REQUIRE && !keyed) {
            return false; // sent once
        }
        return outcome.notProcessed;
    }

    static Stream<Arguments> rows() {
        List<Arguments> rows = new ArrayList<>();
        for (String method : List.of("GET", "PUT", "POST", "PATCH")) {
            for (IdempotencyKeyMode mode : IdempotencyKeyMode.values()) {
                for (boolean callerKey : List.of(false, true)) {
                    for (boolean honoured : List.of(false, true)) {
                        for (Outcome outcome : Outcome.values()) {
                            if (outcome == Outcome.TIMEOUT && !method.equals("GET") && !method.equals("POST")) {
                                continue; // timeouts cost real time: PUT and PATCH behave as GET and POST (unit table)
                            }
                            rows.add(Arguments.of(method, mode, callerKey, honoured, outcome,
                                    retried(method, mode, callerKey, honoured, outcome)));
                        }
                    }
                }
            }
        }
        return rows.stream();
    }

    @ParameterizedTest(name = "{0} {1} callerKey={2} keysHonoured={3} {4} -> retried={5}")
    @MethodSource("rows")
    void sendsAgainOnlyWhenItIsSafe(String method, IdempotencyKeyMode mode, boolean callerKey, boolean honoured,
                                    Outcome outcome, boolean expectRetry) throws Exception {
        VirtualClock clock = new VirtualClock();
        // only the timeout rows need a short attempt timeout; elsewhere a loaded machine must not turn a
        // slow send into a timeout that changes the row's outcome
        Duration attemptTimeout = outcome == Outcome.TIMEOUT ? Duration.ofSeconds(1) : Duration.ofSeconds(20);
        RetryPolicy policy = HttpTesting.fixedWaits(2).toBuilder().attemptTimeout(attemptTimeout).build();
        RetryingHttpClient http = HttpTesting.client(clock, 2).policy(policy).idempotencyKeys(mode)
                .keysHonoured(uri -> honoured).build();
        String path = "/row-" + ROW.incrementAndGet();
        URI uri = outcome == Outcome.CONNECT_REFUSED ? closedPort(path) : server.uri(path);
        if (outcome != Outcome.CONNECT_REFUSED) {
            server.otherwise(outcome.step());
        }
        HttpRequest.Builder request = HttpRequest.newBuilder(uri)
                .method(method, HttpRequest.BodyPublishers.ofString("{\"charge\":1}"));
        if (callerKey) {
            request.header("Idempotency-Key", "\"" + path + "\"");
        }
        try {
            HttpResponse<String> response = http.send(request.build(), HttpResponse.BodyHandlers.ofString());
            assertThat(http.retries(response)).as("retries(response) tells the same").isEqualTo(expectRetry);
        } catch (IOException expected) {
            // connect failures, timeouts and resets end in the last exception; the sends are what count
        }
        assertThat(clock.sleeps()).as("a second attempt was scheduled").hasSize(expectRetry ? 1 : 0);
        if (outcome != Outcome.CONNECT_REFUSED) {
            // a request the client gave up on after its timeout may reach the handler a moment later
            int expected = expectRetry ? 2 : 1;
            Await.within(Await.LIMIT, () -> received(path) >= expected);
            assertThat(received(path)).as("requests the server received").isEqualTo(expected);
        }
    }

    private static long received(String path) {
        return server.received().stream().filter(r -> r.path().equals(path)).count();
    }

    private static URI closedPort(String path) throws IOException {
        int port;
        try (ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            port = s.getLocalPort();
        }
        return URI.create("http://127.0.0.1:" + port + path);
    }
}
