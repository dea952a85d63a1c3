package dev.stagger.conformance;

import static dev.stagger.testsupport.http.FaultServer.status;
import static org.assertj.core.api.Assertions.assertThat;

import dev.stagger.testsupport.http.FaultServer;
import dev.stagger.Backoff;
import dev.stagger.HedgePolicy;
import dev.stagger.RetryEvent;
import dev.stagger.RetryListener;
import dev.stagger.RetryPolicy;
import dev.stagger.http.IdempotencyKeyMode;
import dev.stagger.http.RetryingHttpClient;
import dev.stagger.testing.VirtualClock;
import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import java.util.function.UnaryOperator;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Hedged requests, the same for every client that hedges ({@link ClientUnderTest#hedges()}): the
 * hedge delay runs on the rules' virtual clock, and the fault server holds the first attempt's
 * answer (the one whose {@code Stagger-Attempt} is 1) until the case ends, so the hedge wins
 * whichever request reaches the server first. The loser is cancelled: the client's pool holds no
 * connection for it while the server still holds its answer. An async client runs its due timers
 * as soon as they are scheduled ({@link VirtualTime#drive}), so its hedge may win before the first
 * attempt has even reached the server, which then never sees it.
 */
class HedgingConformanceTest {
    private static final Duration DELAY = Duration.ofMillis(50);

    private FaultServer server;
    private final VirtualClock clock = new VirtualClock();
    private final CountDownLatch release = new CountDownLatch(1);
    private final ExecutorService caller = Executors.newSingleThreadExecutor();
    private final List<RetryEvent> hedges = new CopyOnWriteArrayList<>();

    @BeforeEach
    void start() throws Exception {
        server = new FaultServer();
    }

    @AfterEach
    void stop() throws Exception {
        release.countDown();
        caller.shutdownNow();
        server.close();
    }

    static Stream<ClientUnderTest> hedgingClients() {
        return Clients.ALL.stream().filter(ClientUnderTest::hedges);
    }

    /** Three attempts, a hedge after 50 ms (virtual), no budget; hedges sent recorded. */
    private UnaryOperator<RetryingHttpClient.Builder> rules() {
        return b -> b.service("catalog")
                .policy(RetryPolicy.builder().maxAttempts(3).backoff(Backoff.fixed(Duration.ofMillis(100)))
                        .hedge(HedgePolicy.after(DELAY)).build())
                .withoutBudget()
                .listener(new RetryListener() {
                    @Override
                    public void onHedgeSent(RetryEvent.HedgeSent event) {
                        hedges.add(event);
                    }
                });
    }

    /** The first attempt's answer is held until the case ends (10 s at most); any other is 200 "hedge". */
    private FaultServer.Step slowFirstAttempt() {
        return firstAttemptHeldBy(() -> release);
    }

    /** The first attempt's answer is held until {@code release}'s latch opens (10 s at most); any other is 200 "hedge". */
    private static FaultServer.Step firstAttemptHeldBy(Supplier<CountDownLatch> release) {
        return (request, response, callback) -> {
            if ("1".equals(request.getHeaders().get("Stagger-Attempt"))) {
                release.get().await(10, TimeUnit.SECONDS);
                status(200, "slow").answer(request, response, callback);
            } else {
                status(200, "hedge").answer(request, response, callback);
            }
        };
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("hedgingClients")
    void hedgesASlowGetAndCancelsTheLoser(ClientUnderTest client) throws Exception {
        try (ClientUnderTest.Open http = client.open(clock, rules())) {
            server.then(slowFirstAttempt(), slowFirstAttempt());

            CompletableFuture<ClientUnderTest.Answer> answer = sendInBackground(http, "GET", server.uri("/items/1"), null);
            awaitTrue(() -> !server.received().isEmpty());
            clock.advance(DELAY);

            assertThat(answer.get(10, TimeUnit.SECONDS)).isEqualTo(new ClientUnderTest.Answer(200, "hedge"));
            assertThat(server.received()).extracting(FaultServer.Received::attemptHeader).contains("2").isSubsetOf("1", "2");
            assertThat(hedges).hasSize(1);
            assertLoserReleased(http);
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("hedgingClients")
    void hedgesAKeyedPostToAServerThatHonoursKeysWithTheSameKey(ClientUnderTest client) throws Exception {
        try (ClientUnderTest.Open http = client.open(clock, rules().andThen(b -> b.keysHonoured(uri -> true))::apply)) {
            server.then(slowFirstAttempt(), slowFirstAttempt());

            CompletableFuture<ClientUnderTest.Answer> answer = sendInBackground(http, "POST", server.uri("/orders"), "{\"sku\":7}");
            awaitTrue(() -> !server.received().isEmpty());
            clock.advance(DELAY);

            assertThat(answer.get(10, TimeUnit.SECONDS)).isEqualTo(new ClientUnderTest.Answer(200, "hedge"));
            List<FaultServer.Received> received = server.received();
            assertThat(received).extracting(FaultServer.Received::attemptHeader).contains("2").isSubsetOf("1", "2");
            assertThat(received).extracting(FaultServer.Received::body).containsOnly("{\"sku\":7}");
            assertThat(received.get(0).idempotencyKey()).isNotBlank();
            assertThat(received).extracting(FaultServer.Received::idempotencyKey).containsOnly(received.get(0).idempotencyKey());
            assertLoserReleased(http);
        }
    }

    /**
     * The loser is cancelled every time, not just usually: the keyed POST fifty times over, each
     * round with a client of its own, so each attempt opens its connection while the other runs (the
     * window in which Apache's async client missed a cancel about one round in twelve). One server
     * for all rounds: its answer to attempt 1 waits for the round's own release.
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("hedgingClients")
    void cancelsTheLoserInEveryRound(ClientUnderTest client) throws Exception {
        AtomicReference<CountDownLatch> roundRelease = new AtomicReference<>(new CountDownLatch(1));
        server.otherwise(firstAttemptHeldBy(roundRelease::get));
        for (int round = 1; round <= 50; round++) {
            VirtualClock roundClock = new VirtualClock();
            int before = server.received().size();
            try (ClientUnderTest.Open http = client.open(roundClock, rules().andThen(b -> b.keysHonoured(uri -> true))::apply)) {
                CompletableFuture<ClientUnderTest.Answer> answer = sendInBackground(http, "POST", server.uri("/orders"), "{}");
                awaitTrue(() -> server.received().size() > before);
                roundClock.advance(DELAY);

                assertThat(answer.get(10, TimeUnit.SECONDS)).as("round %d's answer", round)
                        .isEqualTo(new ClientUnderTest.Answer(200, "hedge"));
                awaitTrue(() -> http.connectionsInUse() == 0);
                assertThat(http.connectionsInUse()).as("round %d: connections the client's pool holds for the losing attempt", round)
                        .isZero();
            } finally {
                roundRelease.getAndSet(new CountDownLatch(1)).countDown();
            }
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("hedgingClients")
    void neverHedgesAPostWithoutAKeyTheServerHonours(ClientUnderTest client) throws Exception {
        try (ClientUnderTest.Open http = client.open(clock, rules().andThen(b -> b.idempotencyKeys(IdempotencyKeyMode.AUTO))::apply)) {
            server.then(slowFirstAttempt());

            // keys are generated, but the server is not declared to honour them: one attempt at a time
            CompletableFuture<ClientUnderTest.Answer> answer = sendInBackground(http, "POST", server.uri("/orders"), "{}");
            awaitTrue(() -> !server.received().isEmpty());
            clock.advance(DELAY.multipliedBy(10));
            release.countDown();

            assertThat(answer.get(10, TimeUnit.SECONDS)).isEqualTo(new ClientUnderTest.Answer(200, "slow"));
            assertThat(hedges).isEmpty();
            assertThat(server.received()).hasSize(1);
        }
    }

    private CompletableFuture<ClientUnderTest.Answer> sendInBackground(ClientUnderTest.Open http, String method, URI uri,
                                                                       String body) {
        CompletableFuture<ClientUnderTest.Answer> answer = new CompletableFuture<>();
        caller.execute(() -> {
            try {
                answer.complete(http.send(method, uri, body));
            } catch (Exception | Error e) {
                answer.completeExceptionally(e);
            }
        });
        return answer;
    }

    /**
     * The losing attempt, whose answer the server still holds, was cancelled: the client's pool
     * holds no connection for it; once the server lets the answer go, at most the idle keep-alive
     * connections stay open.
     */
    private void assertLoserReleased(ClientUnderTest.Open http) {
        awaitTrue(() -> http.connectionsInUse() == 0);
        assertThat(http.connectionsInUse()).as("connections the client's pool holds for the losing attempt").isZero();
        release.countDown();
        awaitTrue(() -> server.openConnections() <= 2);
        assertThat(server.openConnections()).as("connections open at the server").isLessThanOrEqualTo(2);
    }

    /** Waits (5 s at most) for {@code condition}, which the caller then asserts. */
    private static void awaitTrue(BooleanSupplier condition) {
        long giveUp = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (!condition.getAsBoolean() && System.nanoTime() < giveUp) {
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(5));
        }
    }
}
