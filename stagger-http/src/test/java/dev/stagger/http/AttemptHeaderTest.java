package dev.stagger.http;

import static dev.stagger.http.HttpTesting.client;
import static dev.stagger.http.HttpTesting.get;
import static dev.stagger.http.HttpTesting.post;
import static dev.stagger.testsupport.http.FaultServer.status;
import static dev.stagger.http.VirtualTime.drive;
import static org.assertj.core.api.Assertions.assertThat;

import dev.stagger.Backoff;
import dev.stagger.RetryPolicy;
import dev.stagger.testing.VirtualClock;
import dev.stagger.testsupport.http.FaultServer;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The headers a Stagger client exchanges with a server: every attempt carries
 * {@code Stagger-Attempt}, so a server can shed retries before first attempts, and
 * {@code Stagger-Deadline-Ms} when it has a deadline; a response carrying {@code Stagger-No-Retry}
 * is not retried, unless its host is not trusted.
 */
class AttemptHeaderTest {
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

    private List<String> attemptsReceived() {
        return server.received().stream().map(FaultServer.Received::attemptHeader).toList();
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

    private List<String> deadlinesReceived() {
        return server.received().stream().map(FaultServer.Received::deadlineHeader).toList();
    }

    private static RetryPolicy withDeadline(Duration deadline) {
        return RetryPolicy.builder().maxAttempts(3).backoff(Backoff.fixed(HttpTesting.WAIT)).deadline(deadline).build();
    }

    @Test
    void eachAttemptCarriesTheMillisecondsLeftBeforeTheDeadline() throws Exception {
        server.then(status(503, "down"), status(503, "down"));
        client(clock, 3).policy(withDeadline(Duration.ofSeconds(2))).build()
                .send(get(server.uri("/items")), HttpResponse.BodyHandlers.ofString());
        assertThat(deadlinesReceived()).containsExactly("2000", "1900", "1800");
    }

    @Test
    void anAsyncCallCarriesItToo() throws Exception {
        server.then(status(503, "down"));
        drive(clock, client(clock, 3).policy(withDeadline(Duration.ofSeconds(2))).build()
                .sendAsync(get(server.uri("/items")), HttpResponse.BodyHandlers.ofString()));
        assertThat(deadlinesReceived()).containsExactly("2000", "1900");
    }

    @Test
    void aCallWithoutDeadlineSendsNone() throws Exception {
        server.then(status(503, "down"));
        client(clock, 2).build().send(get(server.uri("/items")), HttpResponse.BodyHandlers.ofString());
        assertThat(deadlinesReceived()).containsExactly(null, null);
    }

    @Test
    void aResponseSayingDoNotRetryIsNotRetried() throws Exception {
        server.otherwise(status(503, Map.of("Stagger-No-Retry", "gave-up"), "down"));
        RetryingHttpClient http = client(clock, 3).build();
        HttpResponse<String> response = http.send(get(server.uri("/items")), HttpResponse.BodyHandlers.ofString());
        assertThat(server.received()).hasSize(1);
        assertThat(http.verdict(response)).isEqualTo(RetryVerdict.NO_RETRY_SIGNAL);
        assertThat(http.retries(response)).isFalse();
    }

    @Test
    void anAsyncCallHonoursItToo() throws Exception {
        server.otherwise(status(503, Map.of("Stagger-No-Retry", "shed"), "down"));
        drive(clock, client(clock, 3).build().sendAsync(get(server.uri("/items")), HttpResponse.BodyHandlers.ofString()));
        assertThat(server.received()).hasSize(1);
    }

    @Test
    void aHostThatIsNotTrustedCannotStopRetries() throws Exception {
        server.otherwise(status(503, Map.of("Stagger-No-Retry", "gave-up"), "down"));
        RetryingHttpClient http = client(clock, 3).signalsTrusted(uri -> !"127.0.0.1".equals(uri.getHost())).build();
        HttpResponse<String> response = http.send(get(server.uri("/items")), HttpResponse.BodyHandlers.ofString());
        assertThat(server.received()).hasSize(3);
        assertThat(http.verdict(response)).isEqualTo(RetryVerdict.RETRYABLE);
    }

    @Test
    void theSignalDoesNotChangeAStatusThatIsNeverRetried() throws Exception {
        server.otherwise(status(404, Map.of("Stagger-No-Retry", "not-retryable"), "missing"));
        RetryingHttpClient http = client(clock, 3).build();
        HttpResponse<String> response = http.send(get(server.uri("/items")), HttpResponse.BodyHandlers.ofString());
        assertThat(http.verdict(response)).isEqualTo(RetryVerdict.STATUS_NOT_RETRYABLE);
    }
}
