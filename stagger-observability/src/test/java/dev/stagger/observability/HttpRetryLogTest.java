package dev.stagger.observability;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import com.sun.net.httpserver.HttpServer;
import dev.stagger.Backoff;
import dev.stagger.RetryPolicy;
import dev.stagger.http.RetryingHttpClient;
import dev.stagger.testing.VirtualClock;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/** The HTTP client's retries, rendered as http_retry lines, against a real server on loopback. */
class HttpRetryLogTest {
    private final Logger logger = (Logger) LoggerFactory.getLogger("test.stagger.http_retry");
    private final ListAppender<ILoggingEvent> captured = new ListAppender<>();
    private HttpServer server;
    private final AtomicInteger requests = new AtomicInteger();

    @BeforeEach
    void start() throws Exception {
        captured.start();
        logger.addAppender(captured);
        logger.setAdditive(false);
        logger.setLevel(Level.INFO);
        server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        server.createContext("/orders", exchange -> {
            int status = requests.incrementAndGet() == 1 ? 503 : 201;
            exchange.getRequestBody().readAllBytes();
            exchange.sendResponseHeaders(status, -1);
            exchange.close();
        });
        server.start();
    }

    @AfterEach
    void stop() {
        server.stop(0);
        logger.detachAppender(captured);
    }

    @Test
    void aRetriedPostIsLoggedAsOneHttpRetryLineWithTheIdempotencyKeyAsRequestId() throws Exception {
        RetryingHttpClient client = RetryingHttpClient.builder(HttpClient.newHttpClient())
                .service("shop")
                .policy(RetryPolicy.builder().maxAttempts(3).backoff(Backoff.fixed(Duration.ofMillis(250))).build())
                .clock(new VirtualClock())
                .httpListener(new HttpRetryLog(RetryLog.builder().loggerName("test.stagger.http_retry").build()))
                .build();
        HttpRequest post = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.getAddress().getPort() + "/orders"))
                .POST(HttpRequest.BodyPublishers.ofString("{}")).build();

        HttpResponse<String> response = client.send(post, HttpResponse.BodyHandlers.ofString());

        assertThat(response.statusCode()).isEqualTo(201);
        List<ILoggingEvent> lines = captured.list;
        assertThat(lines).hasSize(1);
        Map<String, Object> kv = new LinkedHashMap<>();
        lines.get(0).getKeyValuePairs().forEach(p -> kv.put(p.key, p.value));
        assertThat(kv).containsEntry("event", "http_retry").containsEntry("service", "shop")
                .containsEntry("operation", "POST /orders").containsEntry("attempt", 1).containsEntry("max_attempts", 3)
                .containsEntry("status", 503).containsEntry("delay_ms", 250L);
        assertThat((String) kv.get("request_id")).matches("[0-9a-f-]{36}");
    }
}
