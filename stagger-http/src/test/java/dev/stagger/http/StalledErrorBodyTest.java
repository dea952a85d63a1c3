package dev.stagger.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import com.sun.net.httpserver.HttpServer;
import dev.stagger.Backoff;
import dev.stagger.Clock;
import dev.stagger.RetryPolicy;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A server that sends 503 headers and then stalls the body: draining that body before the retry
 * must not hold the call up (the drain is cut short after a second, on the real clock).
 */
class StalledErrorBodyTest {
    private final CountDownLatch release = new CountDownLatch(1);
    private final AtomicInteger requests = new AtomicInteger();
    private final ExecutorService handlers = Executors.newCachedThreadPool();
    private HttpServer server;

    @BeforeEach
    void start() throws Exception {
        server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        server.createContext("/items", exchange -> {
            if (requests.incrementAndGet() == 1) {
                exchange.sendResponseHeaders(503, 100_000); // promises 100 kB, sends 10 bytes, stalls
                exchange.getResponseBody().write(new byte[10]);
                exchange.getResponseBody().flush();
                try {
                    release.await(60, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                exchange.close();
                return;
            }
            byte[] ok = "ok".getBytes(StandardCharsets.UTF_8);
            exchange.sendResponseHeaders(200, ok.length);
            exchange.getResponseBody().write(ok);
            exchange.close();
        });
        server.setExecutor(handlers);
        server.start();
    }

    @AfterEach
    void stop() {
        release.countDown();
        server.stop(0);
        handlers.shutdownNow();
    }

    @Test
    void aStalledErrorBodyDoesNotHoldUpTheRetry() {
        RetryingHttpClient client = RetryingHttpClient.builder(HttpClient.newHttpClient())
                .service("items")
                .policy(RetryPolicy.builder().maxAttempts(2).backoff(Backoff.none()).build())
                .clock(Clock.system())
                .build();
        HttpRequest get = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.getAddress().getPort() + "/items"))
                .GET().build();

        // without the drain's time limit this waits for the stalled body (60 s) and fails at 20 s
        HttpResponse<InputStream> response = assertTimeoutPreemptively(Duration.ofSeconds(20),
                () -> client.send(get, HttpResponse.BodyHandlers.ofInputStream()));

        assertThat(response.statusCode()).isEqualTo(200);
        assertThat(requests).hasValue(2);
    }
}
