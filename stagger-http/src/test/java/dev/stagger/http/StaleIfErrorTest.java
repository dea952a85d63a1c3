package dev.stagger.http;

import static dev.stagger.http.HttpTesting.client;
import static dev.stagger.http.HttpTesting.get;
import static dev.stagger.http.HttpTesting.post;
import static dev.stagger.testsupport.http.FaultServer.status;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import dev.stagger.CircuitBreaker;
import dev.stagger.RetryEvent;
import dev.stagger.RetryListener;
import dev.stagger.UserFacingException;
import dev.stagger.testing.VirtualClock;
import dev.stagger.testsupport.http.FaultServer;
import java.net.ConnectException;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** {@link StaleResponseCache}: RFC 5861 stale-if-error against a real Jetty server on loopback. */
class StaleIfErrorTest {
    private static final Map<String, String> STALE_10_MIN = Map.of("Cache-Control", "max-age=0, stale-if-error=600");

    private FaultServer server;
    private final VirtualClock clock = new VirtualClock();
    private final StaleResponseCache cache = StaleResponseCache.builder().clock(clock).build();
    private final List<RetryEvent.CallFinished> ends = new CopyOnWriteArrayList<>();

    @BeforeEach
    void start() throws Exception {
        server = new FaultServer();
    }

    @AfterEach
    void stop() throws Exception {
        server.close();
    }

    private RetryingHttpClient.Builder http() {
        return client(clock, 2).fallback(cache).listener(new RetryListener() {
            @Override
            public void onCallFinished(RetryEvent.CallFinished event) {
                ends.add(event);
            }
        });
    }

    private HttpResponse<String> send(RetryingHttpClient http, HttpRequest request) throws Exception {
        return http.send(request, HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void aGetThatRunsOutOfAttemptsIsAnsweredWithTheLastGoodResponseMarkedStale() throws Exception {
        server.then(status(200, STALE_10_MIN, "ACME 41.50")).otherwise(status(503, "down"));
        RetryingHttpClient http = http().build();
        send(http, get(server.uri("/prices")));
        clock.advance(Duration.ofMinutes(2));

        HttpResponse<String> stale = send(http, get(server.uri("/prices")));

        assertThat(stale.statusCode()).isEqualTo(200);
        assertThat(stale.body()).isEqualTo("ACME 41.50");
        assertThat(stale.headers().firstValue(StaleResponseCache.STALE_HEADER)).contains("exhausted");
        assertThat(stale.headers().firstValue("Age")).contains("120"); // 2 min, plus a 100 ms wait
        assertThat(StaleResponseCache.isStale(stale)).isTrue();
        assertThat(StaleResponseCache.age(stale)).contains(Duration.ofSeconds(120));
        assertThat(server.received()).hasSize(3);
        assertThat(ends.get(1).servedByFallback()).isTrue();
        assertThat(ends.get(1).fallback().kind()).isEqualTo("cache");
    }

    @Test
    void aGetRefusedByAnOpenBreakerIsAnsweredStaleWithoutReachingTheServer() throws Exception {
        server.then(status(200, STALE_10_MIN, "ACME 41.50")).otherwise(status(503, "down"));
        CircuitBreaker breaker = CircuitBreaker.builder("prices").consecutiveFailures(1)
                .failurePredicate(StatusTable.defaults().failures()).clock(clock).build();
        RetryingHttpClient http = http().circuitBreaker(breaker).build();
        send(http, get(server.uri("/prices")));
        send(http, get(server.uri("/prices"))); // the 503 opens the breaker, which refuses the retry

        HttpResponse<String> stale = send(http, get(server.uri("/prices")));

        assertThat(stale.body()).isEqualTo("ACME 41.50");
        assertThat(stale.headers().firstValue(StaleResponseCache.STALE_HEADER)).contains("circuit_open");
        assertThat(server.received()).hasSize(2);
    }

    @Test
    void aGetThatCannotConnectIsAnsweredStale() throws Exception {
        server.then(status(200, STALE_10_MIN, "ACME 41.50"));
        RetryingHttpClient http = http().build();
        URI prices = server.uri("/prices");
        send(http, get(prices));
        server.close();

        HttpResponse<String> stale = send(http, get(prices));

        assertThat(stale.body()).isEqualTo("ACME 41.50");
        assertThat(StaleResponseCache.isStale(stale)).isTrue();
    }

    @Test
    void aResponseOlderThanItsStaleIfErrorIsNotServed() throws Exception {
        server.then(status(200, Map.of("Cache-Control", "max-age=60, stale-if-error=60"), "ACME 41.50"))
                .otherwise(status(503, "down"));
        RetryingHttpClient http = http().build();
        send(http, get(server.uri("/prices")));
        clock.advance(Duration.ofSeconds(120)); // plus the 100 ms wait: past max-age + stale-if-error

        HttpResponse<String> answer = send(http, get(server.uri("/prices")));

        assertThat(answer.statusCode()).isEqualTo(503);
        assertThat(StaleResponseCache.isStale(answer)).isFalse();
        assertThat(ends.get(1).fallback().outcome()).isEqualTo(RetryEvent.FallbackRun.Outcome.DECLINED);
    }

    @Test
    void aResponseAsOldAsItsFreshnessPlusStaleIfErrorIsStillServed() throws Exception {
        server.then(status(200, Map.of("Cache-Control", "max-age=60, stale-if-error=60"), "ACME 41.50"))
                .otherwise(status(503, "down"));
        RetryingHttpClient http = http().build();
        send(http, get(server.uri("/prices")));
        clock.advance(Duration.ofSeconds(120).minusMillis(100)); // plus the 100 ms wait: exactly 120 s

        assertThat(send(http, get(server.uri("/prices"))).body()).isEqualTo("ACME 41.50");
    }

    @Test
    void aResponseWithoutStaleIfErrorIsServedOnlyWithinTheClientsDefault() throws Exception {
        server.then(status(200, "ACME 41.50"), status(200, "ACME 41.50")).otherwise(status(503, "down"));
        RetryingHttpClient strict = http().build();
        StaleResponseCache lenient = StaleResponseCache.builder().clock(clock).staleIfError(Duration.ofMinutes(5)).build();
        RetryingHttpClient tolerant = client(clock, 2).fallback(lenient).build();
        send(strict, get(server.uri("/prices")));
        send(tolerant, get(server.uri("/prices")));
        clock.advance(Duration.ofMinutes(1));

        assertThat(send(strict, get(server.uri("/prices"))).statusCode()).isEqualTo(503);
        assertThat(send(tolerant, get(server.uri("/prices"))).body()).isEqualTo("ACME 41.50");
    }

    @Test
    void aNoStoreResponseIsNeverServedStale() throws Exception {
        server.then(status(200, Map.of("Cache-Control", "no-store, stale-if-error=600"), "secret"))
                .otherwise(status(503, "down"));
        RetryingHttpClient http = http().build();
        send(http, get(server.uri("/account")));

        assertThat(send(http, get(server.uri("/account"))).statusCode()).isEqualTo(503);
    }

    @Test
    void aNotFoundIsReturnedAsItIsNotReplacedByAStaleResponse() throws Exception {
        server.then(status(200, STALE_10_MIN, "ACME 41.50")).otherwise(status(404, "gone"));
        RetryingHttpClient http = http().build();
        send(http, get(server.uri("/prices")));

        assertThat(send(http, get(server.uri("/prices"))).statusCode()).isEqualTo(404);
    }

    @Test
    void aPostIsNeverAnsweredStale() throws Exception {
        server.then(status(200, STALE_10_MIN, "created")).otherwise(status(503, "down"));
        RetryingHttpClient http = http().build();
        send(http, post(server.uri("/orders"), "{}"));

        assertThat(send(http, post(server.uri("/orders"), "{}")).statusCode()).isEqualTo(503);
    }

    @Test
    void aResponseVaryingOnAHeaderIsServedOnlyToARequestWithTheSameValue() throws Exception {
        server.then(status(200, Map.of("Cache-Control", "stale-if-error=600", "Vary", "Accept-Language"), "Preise"))
                .otherwise(status(503, "down"));
        RetryingHttpClient http = http().build();
        URI prices = server.uri("/prices");
        send(http, HttpRequest.newBuilder(prices).header("Accept-Language", "de").build());

        HttpResponse<String> english = send(http, HttpRequest.newBuilder(prices).header("Accept-Language", "en").build());
        HttpResponse<String> german = send(http, HttpRequest.newBuilder(prices).header("Accept-Language", "de").build());

        assertThat(english.statusCode()).isEqualTo(503);
        assertThat(german.body()).isEqualTo("Preise");
    }

    @Test
    void theStoredBodyIsReplayedThroughTheRequestsOwnBodyHandler() throws Exception {
        server.then(status(200, STALE_10_MIN, "ACME 41.50")).otherwise(status(503, "down"));
        RetryingHttpClient http = http().build();
        send(http, get(server.uri("/prices")));

        HttpResponse<byte[]> stale = http.send(get(server.uri("/prices")), HttpResponse.BodyHandlers.ofByteArray());

        assertThat(new String(stale.body(), StandardCharsets.UTF_8)).isEqualTo("ACME 41.50");
    }

    @Test
    void anAsyncGetIsAnsweredStale() throws Exception {
        server.then(status(200, STALE_10_MIN, "ACME 41.50")).otherwise(status(503, "down"));
        RetryingHttpClient http = http().build();
        send(http, get(server.uri("/prices")));

        CompletableFuture<HttpResponse<String>> future = http.sendAsync(get(server.uri("/prices")),
                HttpResponse.BodyHandlers.ofString());
        HttpResponse<String> stale = VirtualTime.drive(clock, future);

        assertThat(stale.body()).isEqualTo("ACME 41.50");
        assertThat(StaleResponseCache.isStale(stale)).isTrue();
    }

    @Test
    void aStaleAnswerIsNotStoredAgainAsIfItWereFresh() throws Exception {
        server.then(status(200, Map.of("Cache-Control", "max-age=0, stale-if-error=60"), "ACME 41.50"))
                .otherwise(status(503, "down"));
        RetryingHttpClient http = http().build();
        send(http, get(server.uri("/prices")));
        clock.advance(Duration.ofSeconds(50));
        send(http, get(server.uri("/prices"))); // served stale, at 50 s
        clock.advance(Duration.ofSeconds(20));

        assertThat(send(http, get(server.uri("/prices"))).statusCode()).as("70 s old: past its 60 s").isEqualTo(503);
    }

    @Test
    void withoutAStoredResponseTheFailureIsThrownAsBefore() {
        RetryingHttpClient http = http().build();
        URI nowhere = URI.create("http://127.0.0.1:1/prices");

        assertThat(catchThrowable(() -> send(http, get(nowhere)))).isInstanceOf(ConnectException.class);
    }

    @Test
    void refusesANegativeStaleIfError() {
        assertThat(catchThrowable(() -> StaleResponseCache.builder().staleIfError(Duration.ofSeconds(-1))))
                .isInstanceOf(IllegalArgumentException.class).hasMessage("staleIfError must not be negative, got PT-1S");
    }

    @Test
    void withNothingStoredTheUserMessageSaysWhenToTryAgainFromRetryAfter() {
        server.otherwise(FaultServer.retryAfter(503, "30"));
        RetryingHttpClient http = client(clock, 2).fallback(StaleResponseCache.builder().clock(clock)
                .userMessage("Prices are unavailable right now.").build()).build();

        Throwable thrown = catchThrowable(() -> send(http, get(server.uri("/prices"))));

        assertThat(thrown).isInstanceOf(UserFacingException.class).hasMessage("Prices are unavailable right now.");
        assertThat(((UserFacingException) thrown).retryIn()).contains(Duration.ofSeconds(30));
    }

    @Test
    void withNothingStoredTheUserMessageSaysWhenTheBreakerLetsAProbeThrough() throws Exception {
        server.otherwise(status(503, "down"));
        CircuitBreaker breaker = CircuitBreaker.builder("prices").consecutiveFailures(1).openDuration(Duration.ofSeconds(20))
                .failurePredicate(StatusTable.defaults().failures()).clock(clock).build();
        RetryingHttpClient http = client(clock, 2).circuitBreaker(breaker).fallback(StaleResponseCache.builder()
                .clock(clock).userMessage("Prices are unavailable right now.").build()).build();
        catchThrowable(() -> send(http, get(server.uri("/prices")))); // opens the breaker
        clock.advance(Duration.ofSeconds(5));

        UserFacingException message = (UserFacingException) catchThrowable(() -> send(http, get(server.uri("/prices"))));

        assertThat(message.reason()).isEqualTo(dev.stagger.EndReason.CIRCUIT_OPEN);
        assertThat(message.retryIn()).contains(Duration.ofSeconds(15));
    }

    @Test
    void aNotFoundGetsNoUserMessage() throws Exception {
        server.otherwise(status(404, "gone"));
        RetryingHttpClient http = client(clock, 2).fallback(StaleResponseCache.builder().clock(clock)
                .userMessage("Prices are unavailable right now.").build()).build();

        assertThat(send(http, get(server.uri("/prices"))).statusCode()).isEqualTo(404);
    }

    @Test
    void theStreamedBodyOfTheErrorAStaleAnswerReplacesIsReleased() throws Exception {
        server.then(status(200, STALE_10_MIN, "ACME 41.50"));
        RetryingHttpClient http = client(clock, 1).fallback(cache).build();
        send(http, get(server.uri("/prices")));
        for (int i = 0; i < 50; i++) {
            server.then(status(503, "down ".repeat(2_000)));
            HttpResponse<java.io.InputStream> stale = http.send(get(server.uri("/prices")),
                    HttpResponse.BodyHandlers.ofInputStream());
            try (java.io.InputStream body = stale.body()) {
                assertThat(new String(body.readAllBytes(), StandardCharsets.UTF_8)).isEqualTo("ACME 41.50");
            }
        }

        assertThat(server.acceptedConnections()).as("each 503's connection was released and reused").isLessThanOrEqualTo(4);
    }
}
