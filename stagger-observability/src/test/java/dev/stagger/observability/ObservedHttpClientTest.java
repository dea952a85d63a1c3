package dev.stagger.observability;

import static org.assertj.core.api.Assertions.assertThat;

import com.sun.net.httpserver.HttpServer;
import dev.stagger.Backoff;
import dev.stagger.RetryPolicy;
import dev.stagger.http.RetryingHttpClient;
import dev.stagger.testing.VirtualClock;
import io.micrometer.observation.ObservationRegistry;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.data.SpanData;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * {@link ObservedHttpClient} under {@code RetryingHttpClient} with {@link RetryObservation}, a real
 * tracer (OpenTelemetry SDK through Micrometer Tracing) and a stub on loopback answering 503, 503,
 * 200: the stub receives three requests, each with its own span id, all in one trace.
 */
class ObservedHttpClientTest {
    private final InMemoryTracing tracing = new InMemoryTracing();
    private final InMemorySpanExporter exporter = tracing.exporter;
    private final ObservationRegistry registry = tracing.registry;
    private final List<String> traceparents = new CopyOnWriteArrayList<>();
    private final AtomicInteger requests = new AtomicInteger();
    private HttpServer server;

    @BeforeEach
    void start() throws Exception {
        server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        server.createContext("/orders", exchange -> {
            exchange.getRequestBody().readAllBytes();
            String traceparent = exchange.getRequestHeaders().getFirst("traceparent");
            traceparents.add(traceparent == null ? "none" : traceparent);
            exchange.sendResponseHeaders(requests.incrementAndGet() < 3 ? 503 : 200, -1);
            exchange.close();
        });
        server.start();
    }

    @AfterEach
    void stop() {
        server.stop(0);
        tracing.close();
    }

    private static String attr(SpanData span, String key) {
        return InMemoryTracing.attr(span, key);
    }

    @Test
    void eachAttemptIsItsOwnClientSpanWithItsOwnTraceparentInOneTrace() throws Exception {
        RetryingHttpClient client = RetryingHttpClient.builder(ObservedHttpClient.wrap(HttpClient.newHttpClient(), registry))
                .service("orders")
                .policy(RetryPolicy.builder().maxAttempts(3).backoff(Backoff.fixed(Duration.ofMillis(200))).build())
                .clock(new VirtualClock())
                .listener(RetryObservation.of(registry))
                .build();
        URI uri = URI.create("http://127.0.0.1:" + server.getAddress().getPort() + "/orders");

        HttpResponse<String> response = client.send(HttpRequest.newBuilder(uri).GET().build(), HttpResponse.BodyHandlers.ofString());

        assertThat(response.statusCode()).isEqualTo(200);
        assertThat(traceparents).hasSize(3).doesNotContain("none");
        List<String> traceIds = traceparents.stream().map(t -> t.split("-")[1]).distinct().toList();
        List<String> spanIds = traceparents.stream().map(t -> t.split("-")[2]).toList();
        assertThat(traceIds).as("one trace").hasSize(1);
        assertThat(spanIds).as("a span per request").doesNotHaveDuplicates();

        List<SpanData> sent = exporter.getFinishedSpanItems().stream()
                .filter(s -> attr(s, HttpClientObservation.METHOD) != null)
                .sorted(Comparator.comparing(SpanData::getStartEpochNanos)).toList();
        assertThat(sent).extracting(SpanData::getSpanId).containsExactlyElementsOf(spanIds);
        assertThat(sent).extracting(s -> attr(s, HttpClientObservation.RESEND_COUNT)).containsExactly(null, "1", "2");
        assertThat(sent).extracting(s -> attr(s, HttpClientObservation.STATUS)).containsExactly("503", "503", "200");
        assertThat(sent).extracting(SpanData::getName).containsOnly("GET");

        List<SpanData> attempts = exporter.getFinishedSpanItems().stream()
                .filter(s -> attr(s, RetryObservation.ATTEMPT_NUMBER) != null)
                .sorted(Comparator.comparing(SpanData::getStartEpochNanos)).toList();
        assertThat(attempts).hasSize(3);
        for (int i = 0; i < 3; i++) {
            assertThat(sent.get(i).getParentSpanId()).as("request %d is its attempt's child", i + 1)
                    .isEqualTo(attempts.get(i).getSpanId());
            assertThat(sent.get(i).getTraceId()).isEqualTo(traceIds.get(0));
        }
    }
}
