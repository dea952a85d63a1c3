package dev.stagger.http;

import static dev.stagger.http.HttpTesting.client;
import static dev.stagger.http.HttpTesting.get;
import static dev.stagger.http.HttpTesting.method;
import static dev.stagger.http.HttpTesting.post;
import static dev.stagger.testsupport.http.FaultServer.status;
import static org.assertj.core.api.Assertions.assertThat;

import dev.stagger.testing.VirtualClock;
import dev.stagger.testsupport.http.FaultServer;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class IdempotencyKeyTest {
    private static final String QUOTED_UUID_V4 =
            "\"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}\"";

    private FaultServer server;
    private final VirtualClock clock = new VirtualClock();

    @BeforeEach
    void start() throws Exception {
        server = new FaultServer();
    }

    @AfterEach
    void stop() throws Exception {
        server.close();
    }

    private List<String> keysReceived() {
        return server.received().stream().map(FaultServer.Received::idempotencyKey).toList();
    }

    @Test
    void everyAttemptOfAPostCarriesTheSameGeneratedKey() throws Exception {
        server.then(status(503, "down"), status(500, "oops"), status(502, "bad gateway"));
        HttpResponse<String> response = client(clock, 5).keysHonoured(uri -> true).build()
                .send(post(server.uri("/orders"), "{\"sku\":1}"), HttpResponse.BodyHandlers.ofString());
        assertThat(response.statusCode()).isEqualTo(200);
        List<String> keys = keysReceived();
        assertThat(keys).hasSize(4).allMatch(k -> k.equals(keys.get(0)));
        assertThat(keys.get(0)).matches(QUOTED_UUID_V4);
        assertThat(server.received()).allMatch(r -> r.body().equals("{\"sku\":1}"));
    }

    @Test
    void eachLogicalCallGetsItsOwnKey() throws Exception {
        RetryingHttpClient http = client(clock, 3).build();
        http.send(post(server.uri("/orders"), "a"), HttpResponse.BodyHandlers.ofString());
        http.send(post(server.uri("/orders"), "b"), HttpResponse.BodyHandlers.ofString());
        assertThat(keysReceived()).doesNotHaveDuplicates().doesNotContainNull();
    }

    @Test
    void patchGetsAKeyToo() throws Exception {
        server.then(status(503, "down"));
        client(clock, 3).build().send(method("PATCH", server.uri("/orders/1")), HttpResponse.BodyHandlers.ofString());
        List<String> keys = keysReceived();
        assertThat(keys).hasSize(2).allMatch(k -> k != null && k.equals(keys.get(0)));
    }

    @Test
    void idempotentMethodsGetNoKey() throws Exception {
        RetryingHttpClient http = client(clock, 3).build();
        http.send(get(server.uri("/orders/1")), HttpResponse.BodyHandlers.ofString());
        http.send(method("PUT", server.uri("/orders/1")), HttpResponse.BodyHandlers.ofString());
        http.send(method("DELETE", server.uri("/orders/1")), HttpResponse.BodyHandlers.ofString());
        assertThat(keysReceived()).containsOnlyNulls();
    }

    @Test
    void keepsACallerSuppliedKeyOnEveryAttempt() throws Exception {
        server.then(status(503, "down"));
        HttpRequest request = HttpRequest.newBuilder(server.uri("/orders"))
                .header("Idempotency-Key", "\"order-42\"").POST(HttpRequest.BodyPublishers.ofString("{}")).build();
        client(clock, 3).build().send(request, HttpResponse.BodyHandlers.ofString());
        assertThat(keysReceived()).containsExactly("\"order-42\"", "\"order-42\"");
    }

    @Test
    void aKeyMakesAnAmbiguousOutcomeSafeToRetryOnlyWhereTheServerIsDeclaredToHonourIt() throws Exception {
        server.otherwise(status(500, "oops"));
        RetryingHttpClient http = client(clock, 2).keysHonoured(uri -> uri.getPath().startsWith("/payments")).build();

        http.send(post(server.uri("/payments"), "{}"), HttpResponse.BodyHandlers.ofString());
        http.send(post(server.uri("/orders"), "{}"), HttpResponse.BodyHandlers.ofString());

        assertThat(server.received()).extracting(FaultServer.Received::path)
                .containsExactly("/payments", "/payments", "/orders");
        assertThat(keysReceived()).doesNotContainNull();
    }

    @Test
    void requireModeSendsAnUnkeyedPostOnlyOnce() throws Exception {
        server.then(status(503, "down"));
        RetryingHttpClient http = client(clock, 3).idempotencyKeys(IdempotencyKeyMode.REQUIRE).build();
        HttpResponse<String> response = http.send(post(server.uri("/orders"), "{}"), HttpResponse.BodyHandlers.ofString());
        assertThat(response.statusCode()).isEqualTo(503);
        assertThat(keysReceived()).containsExactly((String) null);
        assertThat(http.retries(response)).isFalse();
    }

    @Test
    void theVerdictOnAnUnkeyedPostIsThatItIsNotSafeToRepeat() throws Exception {
        server.then(status(502, "bad gateway"));
        RetryingHttpClient http = client(clock, 3).idempotencyKeys(IdempotencyKeyMode.REQUIRE).build();
        HttpResponse<String> response = http.send(post(server.uri("/orders"), "{}"), HttpResponse.BodyHandlers.ofString());
        assertThat(response.statusCode()).isEqualTo(502);
        assertThat(http.verdict(response)).isEqualTo(RetryVerdict.NOT_SAFE_TO_REPEAT);
    }

    @Test
    void aKeyedPostToAServerNotKnownToHonourKeysIsNotSafeToRepeatAfterA502() throws Exception {
        server.then(status(502, "bad gateway"));
        RetryingHttpClient http = client(clock, 3).build(); // AUTO attaches a key; nobody said the server honours it
        HttpResponse<String> response = http.send(post(server.uri("/orders"), "{}"), HttpResponse.BodyHandlers.ofString());
        assertThat(keysReceived()).hasSize(1);
        assertThat(http.verdict(response)).isEqualTo(RetryVerdict.NOT_SAFE_TO_REPEAT);
    }

    @Test
    void theVerdictOnAStatusNeverRetriedIsTheStatusEvenWithoutAKey() throws Exception {
        server.then(status(422, "invalid"));
        RetryingHttpClient http = client(clock, 3).idempotencyKeys(IdempotencyKeyMode.REQUIRE).build();
        HttpResponse<String> response = http.send(post(server.uri("/orders"), "{}"), HttpResponse.BodyHandlers.ofString());
        assertThat(http.verdict(response)).isEqualTo(RetryVerdict.STATUS_NOT_RETRYABLE);
    }

    @Test
    void theVerdictOnAKeyedPostThatRanOutOfAttemptsIsRetryable() throws Exception {
        server.then(status(502, "bad gateway"), status(502, "bad gateway"));
        RetryingHttpClient http = client(clock, 2).keysHonoured(uri -> true).build();
        HttpResponse<String> response = http.send(post(server.uri("/orders"), "{}"), HttpResponse.BodyHandlers.ofString());
        assertThat(response.statusCode()).isEqualTo(502);
        assertThat(http.verdict(response)).isEqualTo(RetryVerdict.RETRYABLE);
        assertThat(http.retries(response)).isTrue();
    }

    @Test
    void requireModeRetriesAPostThatCarriesAKey() throws Exception {
        server.then(status(503, "down"));
        String key = "\"" + UUID.randomUUID() + "\"";
        HttpRequest request = HttpRequest.newBuilder(server.uri("/orders"))
                .header("Idempotency-Key", key).POST(HttpRequest.BodyPublishers.ofString("{}")).build();
        HttpResponse<String> response = client(clock, 3).idempotencyKeys(IdempotencyKeyMode.REQUIRE).build()
                .send(request, HttpResponse.BodyHandlers.ofString());
        assertThat(response.statusCode()).isEqualTo(200);
        assertThat(keysReceived()).containsExactly(key, key);
    }

    @Test
    void requireModeStillRetriesIdempotentMethods() throws Exception {
        server.then(status(503, "down"));
        HttpResponse<String> response = client(clock, 3).idempotencyKeys(IdempotencyKeyMode.REQUIRE).build()
                .send(get(server.uri("/orders")), HttpResponse.BodyHandlers.ofString());
        assertThat(response.statusCode()).isEqualTo(200);
        assertThat(server.received()).hasSize(2);
    }

    @Test
    void offModeSendsNoKeyButStillRetriesRetryableStatuses() throws Exception {
        server.then(status(503, "down"));
        HttpResponse<String> response = client(clock, 3).idempotencyKeys(IdempotencyKeyMode.OFF).build()
                .send(post(server.uri("/orders"), "{}"), HttpResponse.BodyHandlers.ofString());
        assertThat(response.statusCode()).isEqualTo(200);
        assertThat(keysReceived()).containsExactly(null, null);
    }
}
