package dev.stagger.http;

import static dev.stagger.http.HttpTesting.WAIT;
import static dev.stagger.http.HttpTesting.client;
import static dev.stagger.http.HttpTesting.get;
import static dev.stagger.http.HttpTesting.post;
import static dev.stagger.testsupport.http.FaultServer.dropMidResponse;
import static dev.stagger.testsupport.http.FaultServer.retryAfter;
import static dev.stagger.testsupport.http.FaultServer.status;
import static dev.stagger.http.VirtualTime.awaitScheduledWait;
import static dev.stagger.http.VirtualTime.drive;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.stagger.testing.VirtualClock;
import dev.stagger.testsupport.http.FaultServer;
import java.io.IOException;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class AsyncSendTest {
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

    @Test
    void retriesAsynchronouslyUntilSuccess() throws Exception {
        server.then(status(503, "down"), status(502, "bad"));
        HttpResponse<String> response = drive(clock, client(clock, 5).build()
                .sendAsync(get(server.uri("/items")), HttpResponse.BodyHandlers.ofString()));
        assertThat(response.statusCode()).isEqualTo(200);
        assertThat(server.received()).hasSize(3);
    }

    @Test
    void schedulesWaitsOnTheClockInsteadOfBlocking() throws Exception {
        server.then(status(503, "down"));
        CompletableFuture<HttpResponse<String>> future = client(clock, 5).build()
                .sendAsync(get(server.uri("/items")), HttpResponse.BodyHandlers.ofString());
        awaitScheduledWait(clock);
        assertThat(future).isNotDone();
        assertThat(server.received()).hasSize(1);
        assertThat(drive(clock, future).statusCode()).isEqualTo(200);
        assertThat(clock.now()).isEqualTo(WAIT);
        assertThat(clock.sleeps()).isEmpty();
    }

    @Test
    void honoursRetryAfterAsynchronously() throws Exception {
        server.then(retryAfter(429, "4"));
        drive(clock, client(clock, 5).build().sendAsync(get(server.uri("/items")), HttpResponse.BodyHandlers.ofString()));
        assertThat(clock.now()).isEqualTo(Duration.ofSeconds(4).plus(WAIT));
    }

    @Test
    void sendsTheSameKeyOnEveryAsyncAttemptOfAPost() throws Exception {
        server.then(status(503, "down"), status(504, "timeout"));
        drive(clock, client(clock, 5).keysHonoured(uri -> true).build().sendAsync(post(server.uri("/orders"), "{}"),
                HttpResponse.BodyHandlers.ofString()));
        assertThat(server.received()).extracting(FaultServer.Received::idempotencyKey)
                .hasSize(3).doesNotContainNull().containsOnly(server.received().get(0).idempotencyKey());
    }

    @Test
    void returnsTheLastResponseWhenItGivesUp() throws Exception {
        server.otherwise(status(503, "down"));
        HttpResponse<String> response = drive(clock, client(clock, 3).build()
                .sendAsync(get(server.uri("/items")), HttpResponse.BodyHandlers.ofString()));
        assertThat(response.statusCode()).isEqualTo(503);
        assertThat(server.received()).hasSize(3);
    }

    @Test
    void failsWithTheNetworkErrorOfAnUnkeyedPostWithoutRetrying() throws Exception {
        server.then(dropMidResponse());
        CompletableFuture<HttpResponse<String>> future = client(clock, 3).idempotencyKeys(IdempotencyKeyMode.OFF)
                .build().sendAsync(post(server.uri("/orders"), "{}"), HttpResponse.BodyHandlers.ofString());
        assertThatThrownBy(() -> drive(clock, future)).isInstanceOf(ExecutionException.class)
                .hasCauseInstanceOf(IOException.class);
        assertThat(server.received()).hasSize(1);
    }

    @Test
    void cancellingStopsFurtherAttempts() throws Exception {
        server.otherwise(status(503, "down"));
        CompletableFuture<HttpResponse<String>> future = client(clock, 5).build()
                .sendAsync(get(server.uri("/items")), HttpResponse.BodyHandlers.ofString());
        awaitScheduledWait(clock);
        future.cancel(true);
        clock.runUntilIdle();
        assertThat(server.received()).hasSize(1);
    }
}
