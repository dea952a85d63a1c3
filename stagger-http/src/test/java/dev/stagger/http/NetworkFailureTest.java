package dev.stagger.http;

import static dev.stagger.http.HttpTesting.client;
import static dev.stagger.http.HttpTesting.get;
import static dev.stagger.http.HttpTesting.post;
import static dev.stagger.testsupport.http.FaultServer.dropMidResponse;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.stagger.RetryPolicy;
import dev.stagger.testing.VirtualClock;
import dev.stagger.testsupport.http.FaultServer;
import java.io.IOException;
import java.net.ConnectException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class NetworkFailureTest {
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

    private static URI closedPort() throws IOException {
        int port;
        try (ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            port = s.getLocalPort();
        }
        return URI.create("http://127.0.0.1:" + port + "/orders");
    }

    @Test
    void retriesARefusedConnectionEvenForAnUnkeyedPost() throws Exception {
        RetryingHttpClient http = client(clock, 3).idempotencyKeys(IdempotencyKeyMode.OFF).build();
        assertThatThrownBy(() -> http.send(post(closedPort(), "{}"), HttpResponse.BodyHandlers.ofString()))
                .isInstanceOf(ConnectException.class)
                .satisfies(e -> assertThat(e.getSuppressed()).hasSize(2));
        assertThat(clock.sleeps()).hasSize(2);
    }

    @Test
    void retriesARefusedConnectionInRequireModeBecauseNothingWasSent() throws Exception {
        RetryingHttpClient http = client(clock, 3).idempotencyKeys(IdempotencyKeyMode.REQUIRE).build();
        assertThatThrownBy(() -> http.send(post(closedPort(), "{}"), HttpResponse.BodyHandlers.ofString()))
                .isInstanceOf(ConnectException.class);
        assertThat(clock.sleeps()).hasSize(2);
    }

    @Test
    void retriesAGetWhoseConnectionDroppedMidResponse() throws Exception {
        server.then(dropMidResponse());
        HttpResponse<String> response = client(clock, 3).build()
                .send(get(server.uri("/items")), HttpResponse.BodyHandlers.ofString());
        assertThat(response.statusCode()).isEqualTo(200);
        assertThat(server.received()).hasSize(2);
    }

    @Test
    void doesNotRetryAnUnkeyedPostWhoseConnectionDroppedMidResponse() throws Exception {
        server.then(dropMidResponse());
        RetryingHttpClient http = client(clock, 3).idempotencyKeys(IdempotencyKeyMode.OFF).build();
        assertThatThrownBy(() -> http.send(post(server.uri("/orders"), "{}"), HttpResponse.BodyHandlers.ofString()))
                .isInstanceOf(IOException.class);
        assertThat(server.received()).hasSize(1);
    }

    @Test
    void retriesAKeyedPostWhoseConnectionDroppedMidResponseWhenTheServerHonoursKeys() throws Exception {
        server.then(dropMidResponse());
        HttpResponse<String> response = client(clock, 3).keysHonoured(uri -> true).build()
                .send(post(server.uri("/orders"), "{}"), HttpResponse.BodyHandlers.ofString());
        assertThat(response.statusCode()).isEqualTo(200);
        assertThat(server.received()).hasSize(2);
    }

    @Test
    void doesNotRetryAKeyedPostWhoseConnectionDroppedMidResponseWhenTheServersKeySupportIsUnknown() throws Exception {
        server.then(dropMidResponse());
        RetryingHttpClient http = client(clock, 3).build();
        assertThatThrownBy(() -> http.send(post(server.uri("/orders"), "{}"), HttpResponse.BodyHandlers.ofString()))
                .isInstanceOf(IOException.class);
        assertThat(server.received()).hasSize(1);
        assertThat(server.received().get(0).idempotencyKey()).as("the key is still sent").isNotNull();
    }

    @Test
    void retriesAGetThatTimedOut() throws Exception {
        server.then(server.stall(200));
        RetryPolicy policy = HttpTesting.fixedWaits(3).toBuilder().attemptTimeout(Duration.ofSeconds(1)).build();
        HttpResponse<String> response = client(clock, 3).policy(policy).build()
                .send(get(server.uri("/items")), HttpResponse.BodyHandlers.ofString());
        assertThat(response.body()).isEqualTo("ok");
        assertThat(server.received()).hasSize(2);
    }

    @Test
    void doesNotRetryAnUnkeyedPostThatTimedOutBecauseItMayHaveBeenProcessed() throws Exception {
        server.then(server.stall(200));
        RetryPolicy policy = HttpTesting.fixedWaits(3).toBuilder().attemptTimeout(Duration.ofSeconds(1)).build();
        RetryingHttpClient http = client(clock, 3).policy(policy).idempotencyKeys(IdempotencyKeyMode.OFF).build();
        assertThatThrownBy(() -> http.send(post(server.uri("/orders"), "{}"), HttpResponse.BodyHandlers.ofString()))
                .isInstanceOf(HttpTimeoutException.class);
        assertThat(server.received()).hasSize(1);
    }
}
