package dev.stagger.http;

import static dev.stagger.http.HttpTesting.client;
import static dev.stagger.http.HttpTesting.get;
import static dev.stagger.http.HttpTesting.method;
import static dev.stagger.http.HttpTesting.post;
import static dev.stagger.testsupport.http.FaultServer.status;
import static org.assertj.core.api.Assertions.assertThat;

import dev.stagger.testing.VirtualClock;
import dev.stagger.testsupport.http.FaultServer;
import java.net.http.HttpResponse;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class StatusClassificationTest {
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

    @ParameterizedTest
    @ValueSource(ints = {408, 429, 500, 502, 503, 504})
    void retriesTransientStatusesUntilSuccess(int status) throws Exception {
        server.then(status(status, "no"), status(status, "no"));
        HttpResponse<String> response = client(clock, 5).build()
                .send(get(server.uri("/items")), HttpResponse.BodyHandlers.ofString());
        assertThat(response.statusCode()).isEqualTo(200);
        assertThat(server.received()).hasSize(3);
    }

    @ParameterizedTest
    @ValueSource(ints = {400, 401, 403, 404, 405, 410, 418, 422, 501, 505, 511})
    void neverRetriesStatusesThatDescribeTheRequest(int status) throws Exception {
        server.then(status(status, "no"));
        HttpResponse<String> response = client(clock, 5).build()
                .send(get(server.uri("/items")), HttpResponse.BodyHandlers.ofString());
        assertThat(response.statusCode()).isEqualTo(status);
        assertThat(response.body()).isEqualTo("no");
        assertThat(server.received()).hasSize(1);
    }

    @ParameterizedTest
    @ValueSource(strings = {"GET", "HEAD", "PUT", "DELETE", "OPTIONS"})
    void retriesConflictForIdempotentMethods(String verb) throws Exception {
        server.then(status(409, "busy"));
        HttpResponse<String> response = client(clock, 5).build()
                .send(method(verb, server.uri("/items/1")), HttpResponse.BodyHandlers.ofString());
        assertThat(response.statusCode()).isEqualTo(200);
        assertThat(server.received()).hasSize(2);
    }

    @Test
    void doesNotRetryConflictForAnUnkeyedPost() throws Exception {
        server.then(status(409, "conflict"));
        HttpResponse<String> response = client(clock, 5).idempotencyKeys(IdempotencyKeyMode.OFF).build()
                .send(post(server.uri("/orders"), "{}"), HttpResponse.BodyHandlers.ofString());
        assertThat(response.statusCode()).isEqualTo(409);
        assertThat(server.received()).hasSize(1);
    }

    @Test
    void retriesConflictForAKeyedPostBecauseTheFirstAttemptMayStillBeRunning() throws Exception {
        server.then(status(409, "in flight"));
        HttpResponse<String> response = client(clock, 5).keysHonoured(uri -> true).build()
                .send(post(server.uri("/orders"), "{}"), HttpResponse.BodyHandlers.ofString());
        assertThat(response.statusCode()).isEqualTo(200);
        assertThat(server.received()).hasSize(2);
    }

    @Test
    void returnsTheLastResponseWhenAttemptsRunOutOnARetryableStatus() throws Exception {
        server.otherwise(status(503, "still down"));
        RetryingHttpClient http = client(clock, 4).build();
        HttpResponse<String> response = http.send(get(server.uri("/items")), HttpResponse.BodyHandlers.ofString());
        assertThat(response.statusCode()).isEqualTo(503);
        assertThat(response.body()).isEqualTo("still down");
        assertThat(server.received()).hasSize(4);
        assertThat(http.retries(response)).as("gave up on a retryable status").isTrue();
    }

    @Test
    void tellsAReturnedNonRetryableStatusFromOneItGaveUpOn() throws Exception {
        server.then(status(404, "missing"));
        RetryingHttpClient http = client(clock, 4).build();
        HttpResponse<String> response = http.send(get(server.uri("/items")), HttpResponse.BodyHandlers.ofString());
        assertThat(http.retries(response)).isFalse();
    }

    @Test
    void judgesAConflictByTheKeyTheClientSent() throws Exception {
        server.otherwise(status(409, "in flight"));
        RetryingHttpClient keyed = client(clock, 2).keysHonoured(uri -> true).build();
        RetryingHttpClient unkeyed = client(clock, 2).idempotencyKeys(IdempotencyKeyMode.OFF).build();
        assertThat(keyed.retries(keyed.send(post(server.uri("/orders"), "{}"), HttpResponse.BodyHandlers.ofString())))
                .isTrue();
        assertThat(unkeyed.retries(unkeyed.send(post(server.uri("/orders"), "{}"), HttpResponse.BodyHandlers.ofString())))
                .isFalse();
    }

    @Test
    void aCustomTableOverridesTheDefaults() throws Exception {
        server.then(status(404, "not yet"), status(503, "down"));
        RetryingHttpClient http = client(clock, 5)
                .statusTable(StatusTable.defaults().withRetry(404).withNever(503)).build();
        HttpResponse<String> response = http.send(get(server.uri("/items")), HttpResponse.BodyHandlers.ofString());
        assertThat(response.statusCode()).isEqualTo(503);
        assertThat(server.received()).hasSize(2);
    }

    @Test
    void doesNotRetryRedirectsOrSuccesses() throws Exception {
        server.then(status(304, ""));
        HttpResponse<String> response = client(clock, 5).build()
                .send(get(server.uri("/items")), HttpResponse.BodyHandlers.ofString());
        assertThat(response.statusCode()).isEqualTo(304);
        assertThat(server.received()).hasSize(1);
    }
}
