package dev.stagger.http;

import static dev.stagger.http.HttpTesting.WAIT;
import static dev.stagger.http.HttpTesting.client;
import static dev.stagger.http.HttpTesting.get;
import static dev.stagger.testsupport.http.FaultServer.retryAfter;
import static org.assertj.core.api.Assertions.assertThat;

import dev.stagger.Backoff;
import dev.stagger.RetryPolicy;
import dev.stagger.testing.VirtualClock;
import dev.stagger.testsupport.http.FaultServer;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Retry-After as seen through a real server: the hint is a minimum, the backoff's wait goes on top. */
class RetryAfterTest {
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

    private HttpResponse<String> send(RetryingHttpClient http) throws Exception {
        return http.send(get(server.uri("/items")), HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void waitsAtLeastTheDelaySecondsOfA503() throws Exception {
        server.then(retryAfter(503, "3"));
        assertThat(send(client(clock, 3).build()).statusCode()).isEqualTo(200);
        assertThat(clock.sleeps()).containsExactly(Duration.ofSeconds(3).plus(WAIT));
    }

    @Test
    void waitsAtLeastTheDelaySecondsOfA429() throws Exception {
        server.then(retryAfter(429, "2"));
        assertThat(send(client(clock, 3).build()).statusCode()).isEqualTo(200);
        assertThat(clock.sleeps()).containsExactly(Duration.ofSeconds(2).plus(WAIT));
    }

    @Test
    void waitsUntilAnHttpDate() throws Exception {
        String inSevenSeconds = DateTimeFormatter.RFC_1123_DATE_TIME
                .format(Instant.ofEpochMilli(clock.currentTimeMillis()).plusSeconds(7).atOffset(ZoneOffset.UTC));
        server.then(retryAfter(503, inSevenSeconds));
        assertThat(send(client(clock, 3).build()).statusCode()).isEqualTo(200);
        assertThat(clock.sleeps()).containsExactly(Duration.ofSeconds(7).plus(WAIT));
    }

    @Test
    void addsJitterOnTopOfTheHint() throws Exception {
        server.then(retryAfter(503, "1"));
        RetryPolicy jittered = RetryPolicy.builder().maxAttempts(3)
                .backoff(Backoff.fixed(Duration.ofSeconds(2)).jitter(dev.stagger.Jitter.full())).build();
        send(client(clock, 3).policy(jittered).random(() -> 0.25).build());
        assertThat(clock.sleeps()).containsExactly(Duration.ofMillis(1500));
    }

    @Test
    void ignoresANegativeValue() throws Exception {
        server.then(retryAfter(503, "-30"));
        assertThat(send(client(clock, 3).build()).statusCode()).isEqualTo(200);
        assertThat(clock.sleeps()).containsExactly(WAIT);
    }

    @Test
    void ignoresGarbage() throws Exception {
        server.then(retryAfter(503, "tomorrow-ish"));
        assertThat(send(client(clock, 3).build()).statusCode()).isEqualTo(200);
        assertThat(clock.sleeps()).containsExactly(WAIT);
    }

    @Test
    void clampsAnAbsurdValueToTheConfiguredMaximum() throws Exception {
        server.then(retryAfter(503, "31536000"));
        send(client(clock, 3).maxRetryAfter(Duration.ofSeconds(30)).build());
        assertThat(clock.sleeps()).containsExactly(Duration.ofSeconds(30).plus(WAIT));
    }

    @Test
    void defaultMaximumIsFiveMinutes() throws Exception {
        server.then(retryAfter(503, "31536000"));
        send(client(clock, 3).build());
        assertThat(clock.sleeps()).containsExactly(Duration.ofMinutes(5).plus(WAIT));
    }

    @Test
    void givesUpAtOnceWhenTheHintIsLongerThanTheRemainingDeadline() throws Exception {
        server.then(retryAfter(503, "60"));
        RetryPolicy policy = HttpTesting.fixedWaits(5).toBuilder().deadline(Duration.ofSeconds(15)).build();
        HttpResponse<String> response = send(client(clock, 5).policy(policy).build());
        assertThat(response.statusCode()).isEqualTo(503);
        assertThat(response.headers().firstValue("Retry-After")).contains("60");
        assertThat(server.received()).hasSize(1);
        assertThat(clock.sleeps()).isEmpty();
    }

    @Test
    void ignoresRetryAfterOnAStatusThatIsNotRetried() throws Exception {
        server.then(retryAfter(400, "1"));
        assertThat(send(client(clock, 3).build()).statusCode()).isEqualTo(400);
        assertThat(server.received()).hasSize(1);
        assertThat(clock.sleeps()).isEmpty();
    }
}
