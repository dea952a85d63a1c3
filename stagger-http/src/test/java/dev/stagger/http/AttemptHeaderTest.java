package dev.stagger.http;

import static dev.stagger.http.HttpTesting.client;
import static dev.stagger.http.HttpTesting.get;
import static dev.stagger.http.HttpTesting.post;
import static dev.stagger.http.ScriptedServer.status;
import static dev.stagger.http.VirtualTime.drive;
import static org.assertj.core.api.Assertions.assertThat;

import dev.stagger.testing.VirtualClock;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Every attempt carries {@code Stagger-Attempt}, so a server can shed retries before first attempts. */
class AttemptHeaderTest {
    private ScriptedServer server;
    private final VirtualClock clock = new VirtualClock();

    @BeforeEach
    void start() throws Exception {
        server = new ScriptedServer();
    }

    @AfterEach
    void stop() throws Exception {
        server.close();
    }

    private List<String> attemptsReceived() {
        return server.received().stream().map(ScriptedServer.Received::attemptHeader).toList();
    }

    @Test
    void eachAttemptOfASyncCallCarriesItsNumber() throws Exception {
        server.then(status(503, "down"), status(502, "bad gateway"));
        client(clock, 5).build().send(get(server.uri("/items")), HttpResponse.BodyHandlers.ofString());
        assertThat(attemptsReceived()).containsExactly("1", "2", "3");
    }

    @Test
    void eachAttemptOfAnAsyncCallCarriesItsNumber() throws Exception {
        server.then(status(503, "down"));
        drive(clock, client(clock, 5).keysHonoured(uri -> true).build()
                .sendAsync(post(server.uri("/orders"), "{}"), HttpResponse.BodyHandlers.ofString()));
        assertThat(attemptsReceived()).containsExactly("1", "2");
    }

    @Test
    void aCallersOwnAttemptHeaderIsReplacedNotRepeated() throws Exception {
        server.then(status(503, "down"));
        HttpRequest request = HttpRequest.newBuilder(server.uri("/items")).header("Stagger-Attempt", "7").GET().build();
        client(clock, 5).build().send(request, HttpResponse.BodyHandlers.ofString());
        assertThat(attemptsReceived()).containsExactly("1", "2");
    }
}
