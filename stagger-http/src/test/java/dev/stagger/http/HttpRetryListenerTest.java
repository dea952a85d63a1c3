package dev.stagger.http;

import static dev.stagger.http.HttpTesting.WAIT;
import static dev.stagger.http.HttpTesting.client;
import static dev.stagger.http.HttpTesting.get;
import static dev.stagger.http.HttpTesting.post;
import static dev.stagger.testsupport.http.FaultServer.dropMidResponse;
import static dev.stagger.testsupport.http.FaultServer.retryAfter;
import static dev.stagger.testsupport.http.FaultServer.status;
import static org.assertj.core.api.Assertions.assertThat;

import dev.stagger.EndReason;
import dev.stagger.RetryEvent;
import dev.stagger.RetryListener;
import dev.stagger.testing.VirtualClock;
import dev.stagger.testsupport.http.FaultServer;
import java.io.IOException;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class HttpRetryListenerTest {
    private FaultServer server;
    private final VirtualClock clock = new VirtualClock();
    private final List<HttpRetryEvent> events = new CopyOnWriteArrayList<>();

    @BeforeEach
    void start() throws Exception {
        server = new FaultServer();
    }

    @AfterEach
    void stop() throws Exception {
        server.close();
    }

    @Test
    void reportsEachScheduledRetryWithTheFieldsOfTheLogLine() throws Exception {
        server.then(status(503, "down"), retryAfter(429, "2"));
        client(clock, 5).httpListener(events::add).build()
                .send(post(server.uri("/orders"), "{}"), HttpResponse.BodyHandlers.ofString());
        String key = server.received().get(0).idempotencyKey().replace("\"", "");
        assertThat(events).hasSize(2);
        HttpRetryEvent first = events.get(0);
        assertThat(first.service()).isEqualTo("orders");
        assertThat(first.operation()).isEqualTo("POST /orders");
        assertThat(first.attempt()).isEqualTo(1);
        assertThat(first.maxAttempts()).isEqualTo(5);
        assertThat(first.status()).isEqualTo(503);
        assertThat(first.delay()).isEqualTo(WAIT);
        assertThat(first.requestId()).isEqualTo(key);
        assertThat(first.method()).isEqualTo("POST");
        assertThat(first.uri()).isEqualTo(server.uri("/orders"));
        assertThat(first.cause()).isNull();
        assertThat(events.get(1).attempt()).isEqualTo(2);
        assertThat(events.get(1).status()).isEqualTo(429);
        assertThat(events.get(1).delay()).isEqualTo(Duration.ofSeconds(2).plus(WAIT));
    }

    @Test
    void coreRetryListenersSeeEveryAttemptAndTheEndReason() throws Exception {
        server.then(status(503, "down"), status(503, "down"));
        List<RetryEvent> seen = new CopyOnWriteArrayList<>();
        client(clock, 5).listener(new RetryListener() {
            @Override
            public void onAttemptFinished(RetryEvent.AttemptFinished e) {
                seen.add(e);
            }

            @Override
            public void onCallFinished(RetryEvent.CallFinished e) {
                seen.add(e);
            }
        }).build().send(get(server.uri("/items")), HttpResponse.BodyHandlers.ofString());
        assertThat(seen).hasSize(4);
        assertThat(seen.get(3)).isInstanceOfSatisfying(RetryEvent.CallFinished.class, e -> {
            assertThat(e.reason()).isEqualTo(EndReason.RECOVERED);
            assertThat(e.attempts()).isEqualTo(3);
        });
    }

    @Test
    void reportsAnExceptionWithStatusMinusOneAndItsCause() throws Exception {
        server.then(dropMidResponse());
        client(clock, 3).httpListener(events::add).build().send(get(server.uri("/items")), HttpResponse.BodyHandlers.ofString());
        assertThat(events).singleElement().satisfies(e -> {
            assertThat(e.status()).isEqualTo(-1);
            assertThat(e.cause()).isInstanceOf(IOException.class);
        });
    }

    @Test
    void usesTheRequestsXRequestIdWhenThereIsNoKey() throws Exception {
        server.then(status(503, "down"));
        HttpRequest request = HttpRequest.newBuilder(server.uri("/items")).header("X-Request-Id", "req-7").GET().build();
        client(clock, 3).httpListener(events::add).build().send(request, HttpResponse.BodyHandlers.ofString());
        assertThat(events).singleElement().extracting(HttpRetryEvent::requestId).isEqualTo("req-7");
    }

    @Test
    void aCustomOperationNameKeepsIdsOutOfTheName() throws Exception {
        server.then(status(503, "down"));
        client(clock, 3).httpListener(events::add).operationName(r -> r.method() + " /items/{id}").build()
                .send(get(server.uri("/items/8812")), HttpResponse.BodyHandlers.ofString());
        assertThat(events).singleElement().extracting(HttpRetryEvent::operation).isEqualTo("GET /items/{id}");
    }

    @Test
    void isNotToldAboutTheFinalAttemptThatIsNotRetried() throws Exception {
        server.otherwise(status(503, "down"));
        client(clock, 3).httpListener(events::add).build().send(get(server.uri("/items")), HttpResponse.BodyHandlers.ofString());
        assertThat(events).extracting(HttpRetryEvent::attempt).containsExactly(1, 2);
    }

    @Test
    void aThrowingListenerDoesNotChangeTheOutcome() throws Exception {
        server.then(status(503, "down"));
        HttpResponse<String> response = client(clock, 3).httpListener(e -> {
            throw new IllegalStateException("broken listener");
        }).build().send(get(server.uri("/items")), HttpResponse.BodyHandlers.ofString());
        assertThat(response.statusCode()).isEqualTo(200);
    }
}
