package dev.stagger.http;

import static dev.stagger.http.HttpTesting.get;
import static dev.stagger.testsupport.http.FaultServer.status;
import static org.assertj.core.api.Assertions.assertThat;

import dev.stagger.Backoff;
import dev.stagger.RetryPolicy;
import dev.stagger.testing.VirtualClock;
import dev.stagger.testsupport.http.FaultServer;
import java.io.InputStream;
import java.net.http.HttpClient;
import java.net.http.HttpResponse;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Retried responses are consumed: with streamed bodies, an unread 503 would pin its connection,
 * and a retry loop would open one connection per attempt until the server ran out.
 */
class ConnectionLeakTest {
    /** Larger than what the JDK client buffers ahead, so an unread body holds its connection open. */
    private static final String LARGE_ERROR_BODY = "x".repeat(512 * 1024);
    private static final String ERROR_BODY = "{\"error\":\"unavailable\",\"detail\":\"" + "x".repeat(2000) + "\"}";

    private FaultServer server;
    private final VirtualClock clock = new VirtualClock();
    private final RetryPolicy noWaits = RetryPolicy.builder().maxAttempts(3).backoff(Backoff.none()).build();

    @BeforeEach
    void start() throws Exception {
        server = new FaultServer();
    }

    @AfterEach
    void stop() throws Exception {
        server.close();
    }

    @Test
    void aThousandRetriedCallsWithStreamedBodiesReuseAHandfulOfConnections() throws Exception {
        HttpClient jdk = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
        RetryingHttpClient http = RetryingHttpClient.builder(jdk).policy(noWaits).clock(clock)
                .withoutBudget().build(); // every call is retried: more than the default budget allows
        for (int i = 0; i < 1_000; i++) {
            server.then(status(503, ERROR_BODY));
            HttpResponse<InputStream> response = http.send(get(server.uri("/items")), HttpResponse.BodyHandlers.ofInputStream());
            try (InputStream body = response.body()) {
                assertThat(response.statusCode()).isEqualTo(200);
                body.readAllBytes();
            }
        }
        assertThat(server.received()).hasSize(2_000);
        assertThat(server.openConnections()).isLessThanOrEqualTo(4);
        assertThat(server.acceptedConnections()).isLessThanOrEqualTo(4);
    }

    @Test
    void asyncRetriesReleaseStreamedBodiesToo() throws Exception {
        HttpClient jdk = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
        RetryingHttpClient http = RetryingHttpClient.builder(jdk).policy(noWaits).clock(clock)
                .withoutBudget().build(); // every call is retried: more than the default budget allows
        for (int i = 0; i < 200; i++) {
            server.then(status(503, ERROR_BODY));
            CompletableFuture<HttpResponse<InputStream>> future =
                    http.sendAsync(get(server.uri("/items")), HttpResponse.BodyHandlers.ofInputStream());
            HttpResponse<InputStream> response = VirtualTime.drive(clock, future);
            try (InputStream body = response.body()) {
                body.readAllBytes();
            }
        }
        assertThat(server.received()).hasSize(400);
        assertThat(server.openConnections()).isLessThanOrEqualTo(4);
    }

    @Test
    void largeRetriedBodiesAreCutShortAndTheirConnectionsClosed() throws Exception {
        HttpClient jdk = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
        RetryingHttpClient http = RetryingHttpClient.builder(jdk).policy(noWaits).clock(clock).build();
        for (int i = 0; i < 100; i++) {
            server.then(status(503, LARGE_ERROR_BODY));
            HttpResponse<InputStream> response = http.send(get(server.uri("/items")), HttpResponse.BodyHandlers.ofInputStream());
            try (InputStream body = response.body()) {
                body.readAllBytes();
            }
        }
        assertThat(server.received()).hasSize(200);
        assertThat(server.openConnections()).isLessThanOrEqualTo(10);
    }

    @Test
    void withoutReleasingBodiesTheSameLoopWouldHoldOneConnectionPerUnreadResponse() throws Exception {
        HttpClient jdk = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
        for (int i = 0; i < 50; i++) {
            server.then(status(503, LARGE_ERROR_BODY));
            jdk.send(get(server.uri("/items")), HttpResponse.BodyHandlers.ofInputStream()); // 503 body never read
            HttpResponse<InputStream> ok = jdk.send(get(server.uri("/items")), HttpResponse.BodyHandlers.ofInputStream());
            try (InputStream body = ok.body()) {
                body.readAllBytes();
            }
        }
        assertThat(server.openConnections()).as("connections held by unread 503 bodies").isGreaterThanOrEqualTo(50);
    }
}
