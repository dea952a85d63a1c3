package dev.stagger.http;

import static dev.stagger.http.HttpTesting.client;
import static dev.stagger.http.HttpTesting.get;
import static dev.stagger.testsupport.http.FaultServer.status;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.stagger.RetryEvent;
import dev.stagger.RetryListener;
import dev.stagger.testing.VirtualClock;
import dev.stagger.testsupport.http.FaultServer;
import java.io.IOException;
import java.io.InputStream;
import java.net.ConnectException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpResponse;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** A thread interrupted while waiting between attempts stops at once and stays interrupted. */
class InterruptTest {
    /** Interrupts the calling thread just before its wait, so the wait itself is interrupted. */
    private static final RetryListener INTERRUPT_BEFORE_WAIT = new RetryListener() {
        @Override
        public void onRetryScheduled(RetryEvent.RetryScheduled event) {
            Thread.currentThread().interrupt();
        }
    };

    private FaultServer server;
    private final VirtualClock clock = new VirtualClock();

    @BeforeEach
    void start() throws Exception {
        server = new FaultServer();
    }

    @AfterEach
    void stop() throws Exception {
        Thread.interrupted();
        server.close();
    }

    @Test
    void returnsTheLastResponseWithItsBodyReleasedAndTheInterruptStatusSet() throws Exception {
        server.then(status(503, "down"));
        RetryingHttpClient http = client(clock, 3).listener(INTERRUPT_BEFORE_WAIT).build();

        HttpResponse<InputStream> response = http.send(get(server.uri("/items")), HttpResponse.BodyHandlers.ofInputStream());

        assertThat(Thread.interrupted()).as("interrupt status kept").isTrue();
        assertThat(response.statusCode()).isEqualTo(503);
        assertThat(server.received()).hasSize(1);
        assertThatThrownBy(() -> response.body().read()).as("body already closed").isInstanceOf(IOException.class);
    }

    @Test
    void throwsTheLastFailureWithTheInterruptStatusSetWhenEveryAttemptThrew() throws Exception {
        RetryingHttpClient http = client(clock, 3).listener(INTERRUPT_BEFORE_WAIT).build();
        URI closed = closedPort();

        assertThatThrownBy(() -> http.send(get(closed), HttpResponse.BodyHandlers.ofString()))
                .isInstanceOf(ConnectException.class);
        assertThat(Thread.interrupted()).as("interrupt status kept").isTrue();
        assertThat(clock.sleeps()).isEmpty();
    }

    private static URI closedPort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return URI.create("http://127.0.0.1:" + s.getLocalPort() + "/items");
        }
    }
}
