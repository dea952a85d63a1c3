package dev.stagger.observability;

import static org.assertj.core.api.Assertions.assertThat;

import com.sun.net.httpserver.HttpServer;
import dev.stagger.CircuitBreaker;
import dev.stagger.Retry;
import dev.stagger.RetryBudget;
import dev.stagger.RetryPolicy;
import dev.stagger.http.RetryingHttpClient;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The README's HTTP snippet hands the client {@code RetryMetrics.listener(name)} and nothing
 * else: the client's breaker and budget must still show up as meters, without a call to bind().
 */
class HttpClientMetricsTest {
    private HttpServer server;

    @BeforeEach
    void start() throws Exception {
        server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        server.createContext("/orders", exchange -> {
            exchange.getRequestBody().readAllBytes();
            exchange.sendResponseHeaders(201, -1);
            exchange.close();
        });
        server.start();
    }

    @AfterEach
    void stop() {
        server.stop(0);
    }

    @Test
    void theBreakerAndBudgetOfAClientWithAMetricsListenerArePublishedWithoutBind() throws Exception {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        RetryBudget ordersBudget = RetryBudget.of("orders-budget");
        CircuitBreaker ordersBreaker = CircuitBreaker.of("orders-breaker");
        RetryingHttpClient orders = RetryingHttpClient.builder(HttpClient.newHttpClient())
                .service("orders")
                .policy(RetryPolicy.interactive())
                .budget(ordersBudget)
                .circuitBreaker(ordersBreaker)
                .listener(RetryMetrics.of(registry).listener("orders"))
                .build();

        HttpResponse<String> created = orders.send(HttpRequest.newBuilder(
                        URI.create("http://127.0.0.1:" + server.getAddress().getPort() + "/orders"))
                .POST(HttpRequest.BodyPublishers.ofString("{}")).build(), HttpResponse.BodyHandlers.ofString());

        assertThat(created.statusCode()).isEqualTo(201);
        assertThat(registry.find(RetryMetrics.CIRCUIT_STATE).tag("name", "orders-breaker").gauge()).isNotNull();
        assertThat(registry.find(RetryMetrics.BUDGET_TOKENS).tag("name", "orders-budget").gauge()).isNotNull();
        assertThat(registry.find(RetryMetrics.CALLS).tag("name", "orders").tag("reason", "success").counter().count())
                .isEqualTo(1.0);
    }

    @Test
    void aListenerAddedBeforeTheBreakerStillBindsIt() {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        CircuitBreaker breaker = CircuitBreaker.of("late-breaker");
        RetryMetrics metrics = RetryMetrics.of(registry);
        Retry retry = Retry.of("late", RetryPolicy.interactive()).withListener(metrics.listener("late"))
                .withCircuitBreaker(breaker);

        assertThat(retry.get(() -> "ok")).isEqualTo("ok");
        assertThat(registry.find(RetryMetrics.CIRCUIT_STATE).tag("name", "late-breaker").gauge()).isNotNull();
        assertThat(registry.find(RetryMetrics.CIRCUIT_STATE).meters()).hasSize(1);
    }
}
