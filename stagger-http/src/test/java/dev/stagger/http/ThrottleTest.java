package dev.stagger.http;

import static dev.stagger.http.HttpTesting.client;
import static dev.stagger.http.HttpTesting.get;
import static dev.stagger.http.HttpTesting.post;
import static dev.stagger.testsupport.http.FaultServer.retryAfter;
import static dev.stagger.testsupport.http.FaultServer.status;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import dev.stagger.AdaptiveThrottle;
import dev.stagger.EndReason;
import dev.stagger.RandomSource;
import dev.stagger.ThrottledException;
import dev.stagger.testing.VirtualClock;
import dev.stagger.testsupport.http.FaultServer;
import java.net.http.HttpResponse;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The adaptive throttle on the HTTP client: what the server said decides what counts as accepted. */
class ThrottleTest {
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

    /** A throttle that never refuses (every draw is above p), to watch what it counts. */
    private AdaptiveThrottle counting() {
        return AdaptiveThrottle.builder("orders").clock(clock).random(RandomSource.sequence(0.999)).build();
    }

    @Test
    void aRetryAfterAnswerIsARejectionAndTheSuccessAfterItAnAccept() throws Exception {
        server.then(retryAfter(503, "1")).then(retryAfter(429, "1")).otherwise(status(200, "ok"));
        AdaptiveThrottle throttle = counting();
        RetryingHttpClient http = client(clock, 5).throttle(throttle).build();

        assertThat(http.send(get(server.uri("/items")), HttpResponse.BodyHandlers.ofString()).statusCode()).isEqualTo(200);

        assertThat(throttle.requests()).isEqualTo(3);
        assertThat(throttle.accepts()).isEqualTo(1);
    }

    @Test
    void aRetryAfterAnswerToARequestThatIsNotRetriedIsStillARejection() throws Exception {
        // an unkeyed POST under REQUIRE is sent once, but the server still turned it away
        server.otherwise(retryAfter(429, "5"));
        AdaptiveThrottle throttle = counting();
        RetryingHttpClient http = client(clock, 5).idempotencyKeys(IdempotencyKeyMode.REQUIRE).throttle(throttle).build();

        assertThat(http.send(post(server.uri("/orders"), "{}"), HttpResponse.BodyHandlers.ofString()).statusCode())
                .isEqualTo(429);

        assertThat(server.received()).hasSize(1);
        assertThat(throttle.requests()).isEqualTo(1);
        assertThat(throttle.accepts()).isZero();
    }

    @Test
    void aStatusThatSaysNothingAboutLoadIsAnAccept() throws Exception {
        server.otherwise(status(404, "no such item"));
        AdaptiveThrottle throttle = counting();
        RetryingHttpClient http = client(clock, 5).throttle(throttle).build();

        http.send(get(server.uri("/items")), HttpResponse.BodyHandlers.ofString());

        assertThat(throttle.accepts()).isEqualTo(1);
    }

    @Test
    void aThrottleThatRefusesEndsTheCallWithoutSendingIt() throws Exception {
        server.otherwise(status(200, "ok"));
        AdaptiveThrottle throttle = AdaptiveThrottle.builder("orders").clock(clock).random(RandomSource.sequence(0.0)).build();
        for (int i = 0; i < 10; i++) {
            throttle.onRejected(); // the server has been turning requests away
        }
        RetryingHttpClient http = client(clock, 5).throttle(throttle).build();

        Throwable refused = catchThrowable(() -> http.send(get(server.uri("/items")), HttpResponse.BodyHandlers.ofString()));

        assertThat(refused).isInstanceOf(ThrottledException.class);
        assertThat(((ThrottledException) refused).reason()).isEqualTo(EndReason.THROTTLED);
        assertThat(server.received()).isEmpty();
        assertThat(http.throttle()).contains(throttle);
        assertThat(http.toBuilder().build().throttle()).contains(throttle);
    }
}
