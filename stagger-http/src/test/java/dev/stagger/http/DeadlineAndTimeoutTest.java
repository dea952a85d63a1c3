package dev.stagger.http;

import static dev.stagger.http.HttpTesting.get;
import static dev.stagger.testsupport.http.FaultServer.retryAfter;
import static dev.stagger.testsupport.http.FaultServer.status;
import static dev.stagger.http.VirtualTime.drive;
import static org.assertj.core.api.Assertions.assertThat;

import dev.stagger.Backoff;
import dev.stagger.RetryPolicy;
import dev.stagger.testing.VirtualClock;
import dev.stagger.testsupport.http.FaultServer;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class DeadlineAndTimeoutTest {
    private FaultServer server;
    private final VirtualClock clock = new VirtualClock();
    private final RecordingHttpClient recording = new RecordingHttpClient();

    @BeforeEach
    void start() throws Exception {
        server = new FaultServer();
    }

    @AfterEach
    void stop() throws Exception {
        server.close();
    }

    private RetryingHttpClient client(RetryPolicy policy) {
        return RetryingHttpClient.builder(recording).policy(policy).clock(clock).build();
    }

    @Test
    void appliesTheAttemptTimeoutAsTheRequestTimeout() throws Exception {
        server.then(status(503, "down"));
        RetryPolicy policy = HttpTesting.fixedWaits(3).toBuilder().attemptTimeout(Duration.ofSeconds(2)).build();
        client(policy).send(get(server.uri("/items")), HttpResponse.BodyHandlers.ofString());
        assertThat(recording.timeouts()).containsExactly(Optional.of(Duration.ofSeconds(2)),
                Optional.of(Duration.ofSeconds(2)));
    }

    @Test
    void shortensTheAttemptTimeoutToTheRemainingDeadline() throws Exception {
        server.then(retryAfter(503, "5"));
        RetryPolicy policy = HttpTesting.fixedWaits(3).toBuilder()
                .deadline(Duration.ofSeconds(10)).attemptTimeout(Duration.ofSeconds(8)).build();
        client(policy).send(get(server.uri("/items")), HttpResponse.BodyHandlers.ofString());
        assertThat(recording.timeouts()).containsExactly(Optional.of(Duration.ofSeconds(8)),
                Optional.of(Duration.ofMillis(4900)));
    }

    @Test
    void boundsEachAsyncAttemptByTheRemainingDeadline() throws Exception {
        // no attemptTimeout here: core would schedule its own timeout task on the virtual clock,
        // and driving virtual time while a real request is in flight would fire it early
        server.then(retryAfter(503, "5"));
        RetryPolicy policy = HttpTesting.fixedWaits(3).toBuilder().deadline(Duration.ofSeconds(10)).build();
        drive(clock, client(policy).sendAsync(get(server.uri("/items")), HttpResponse.BodyHandlers.ofString()));
        assertThat(recording.timeouts()).containsExactly(Optional.of(Duration.ofSeconds(10)),
                Optional.of(Duration.ofMillis(4900)));
    }

    @Test
    void usesTheRemainingDeadlineAsTimeoutWhenThereIsNoAttemptTimeout() throws Exception {
        RetryPolicy policy = HttpTesting.fixedWaits(3).toBuilder().deadline(Duration.ofSeconds(10)).build();
        client(policy).send(get(server.uri("/items")), HttpResponse.BodyHandlers.ofString());
        assertThat(recording.timeouts()).containsExactly(Optional.of(Duration.ofSeconds(10)));
    }

    @Test
    void givesUpWithTheLastResponseWhenTheNextWaitWouldPassTheDeadline() throws Exception {
        server.otherwise(status(503, "down"));
        RetryPolicy policy = RetryPolicy.builder().maxAttempts(10).backoff(Backoff.fixed(Duration.ofSeconds(4)))
                .deadline(Duration.ofSeconds(10)).build();
        HttpResponse<String> response = client(policy).send(get(server.uri("/items")), HttpResponse.BodyHandlers.ofString());
        assertThat(response.statusCode()).isEqualTo(503);
        assertThat(server.received()).hasSize(3);
        assertThat(clock.now()).isEqualTo(Duration.ofSeconds(8));
    }
}
