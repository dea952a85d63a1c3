package dev.stagger.spring.app;

import static org.assertj.core.api.Assertions.assertThat;

import com.jayway.jsonpath.JsonPath;
import dev.stagger.spring.StaggerHttp;
import dev.stagger.spring.StaggerWebClient;
import dev.stagger.testing.VirtualClock;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.http.client.JdkClientHttpRequestFactory;
import org.springframework.http.client.reactive.JdkClientHttpConnector;
import org.springframework.web.client.HttpClientErrorException;
import org.springframework.web.client.RestClient;
import org.springframework.web.reactive.function.client.WebClient;

/**
 * The starter in a running service: Tomcat on loopback, PostgreSQL, actuator and Prometheus. One
 * context for every test here (its state is reset per test where it matters).
 */
@SpringBootTest(classes = ShopApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {
                "server.address=127.0.0.1",
                "management.endpoints.web.exposure.include=health,stagger,prometheus",
                "management.endpoint.health.show-details=always",
                "stagger.retries.default.max-attempts=3",
                "stagger.retries.default.backoff.type=fixed",
                "stagger.retries.default.backoff.base=100ms",
                "stagger.retries.default.backoff.jitter=none",
                "stagger.retries.payments.circuit-breaker=payments",
                "stagger.retries.payments.budget=shared",
                "stagger.circuit-breakers.payments.minimum-calls=50",
                "stagger.circuit-breakers.maintenance.consecutive-failures=5",
                "stagger.budgets.shared.ratio=0.5",
                "stagger.http.clients.payments.keys-honoured=true",
                "stagger.idempotency.enabled=true",
                "stagger.idempotency.paths=/orders",
                "stagger.idempotency.scope-header=X-Api-Key",
                "stagger.idempotency.table-prefix=stagger_spring_test_"
        })
class ShopApplicationTest {
    @LocalServerPort
    int port;
    @Autowired
    StaggerHttp http;
    @Autowired
    StaggerWebClient webClient;
    @Autowired
    VirtualClock clock;
    @Autowired
    ShopApplication.Downstream downstream;
    @Autowired
    ShopApplication.Inventory inventory;

    private final HttpClient jdk = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

    @BeforeEach
    void reset() {
        downstream.charges.set(0);
        downstream.keys.clear();
    }

    private String base() {
        return "http://127.0.0.1:" + port;
    }

    private RestClient restClient() {
        return RestClient.builder().baseUrl(base()).requestFactory(new JdkClientHttpRequestFactory(jdk))
                .requestInterceptor(http.interceptor("payments")).build();
    }

    @Test
    void aRestClientPostIsRetriedAfter503WaitingRetryAfterWithOneIdempotencyKey() {
        Duration before = clock.now();
        String body = restClient().post().uri("/downstream/charges").body("42").retrieve().body(String.class);

        assertThat(body).isEqualTo("charged 42");
        assertThat(downstream.keys).hasSize(2).doesNotContain("null");
        assertThat(downstream.keys.get(0)).isEqualTo(downstream.keys.get(1)).matches("\"[0-9a-f-]{36}\"");
        assertThat(clock.now().minus(before)).isGreaterThanOrEqualTo(Duration.ofSeconds(2)); // Retry-After was the minimum
    }

    @Test
    void aRestClient404IsNotRetried() {
        try {
            restClient().get().uri("/downstream/missing").retrieve().body(String.class);
        } catch (HttpClientErrorException.NotFound expected) {
            // the status comes back as RestClient reports it
        }
        assertThat(downstream.charges).hasValue(1);
    }

    @Test
    void aWebClientPostIsRetriedWithoutBlockingWithOneIdempotencyKey() throws Exception {
        WebClient client = WebClient.builder().baseUrl(base()).clientConnector(new JdkClientHttpConnector(jdk))
                .filter(webClient.filter("payments")).build();
        CompletableFuture<String> result = client.post().uri("/downstream/charges").bodyValue("7")
                .retrieve().bodyToMono(String.class).toFuture();
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (!result.isDone() && System.nanoTime() < until) {
            clock.runUntilIdle(); // the wait is scheduled on the virtual clock: move it
            Thread.sleep(5);
        }
        assertThat(result.get(1, TimeUnit.SECONDS)).isEqualTo("charged 7");
        assertThat(downstream.keys).hasSize(2);
        assertThat(downstream.keys.get(0)).isEqualTo(downstream.keys.get(1)).matches("\"[0-9a-f-]{36}\"");
    }

    @Test
    void theAnnotatedBeanMethodIsRetried() {
        assertThat(inventory.reserve()).isEqualTo(2);
    }

    @Test
    void theIdempotencyFilterReplaysAKeyedRequestScopedByTheHashedApiKey() throws Exception {
        HttpRequest.Builder order = HttpRequest.newBuilder(URI.create(base() + "/orders"))
                .header("Content-Type", "text/plain").header("X-Api-Key", "secret-key-of-client-a")
                .header("Idempotency-Key", "\"order-" + System.nanoTime() + "\"")
                .POST(HttpRequest.BodyPublishers.ofString("{}"));
        HttpResponse<String> first = jdk.send(order.build(), HttpResponse.BodyHandlers.ofString());
        HttpResponse<String> second = jdk.send(order.build(), HttpResponse.BodyHandlers.ofString());

        assertThat(first.statusCode()).isEqualTo(201);
        assertThat(second.statusCode()).isEqualTo(201);
        assertThat(second.body()).isEqualTo(first.body());
        assertThat(second.headers().firstValue("Idempotent-Replayed")).contains("true");
    }

    @Test
    void aKeyedRequestWithoutAnyClientIdentityIsRefusedWithNoClientScope() throws Exception {
        HttpResponse<String> response = jdk.send(HttpRequest.newBuilder(URI.create(base() + "/orders"))
                .header("Content-Type", "text/plain").header("Idempotency-Key", "\"k-" + System.nanoTime() + "\"")
                .POST(HttpRequest.BodyPublishers.ofString("{}")).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(response.statusCode()).isEqualTo(400);
        assertThat(response.body()).contains("no-client-scope");
    }

    @Test
    void theActuatorEndpointListsInstancesWithBreakerStateBudgetAndEndReasons() throws Exception {
        restClient().post().uri("/downstream/charges").body("1").retrieve().body(String.class);
        String json = jdk.send(HttpRequest.newBuilder(URI.create(base() + "/actuator/stagger")).build(),
                HttpResponse.BodyHandlers.ofString()).body();
        assertThat(json).contains("\"payments\"").contains("\"state\":\"closed\"").contains("\"shared\"")
                .contains("\"tokens\"").contains("\"recovered\":");
    }

    private String forceBreaker(String name, String state) throws Exception {
        return jdk.send(HttpRequest.newBuilder(URI.create(base() + "/actuator/stagger/" + name))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString("{\"state\":\"" + state + "\"}")).build(),
                HttpResponse.BodyHandlers.ofString()).body();
    }

    @Test
    void anOperatorForcesABreakerOpenAndClosesItAgainThroughTheEndpoint() throws Exception {
        String opened = forceBreaker("maintenance", "open");
        String health = jdk.send(HttpRequest.newBuilder(URI.create(base() + "/actuator/health")).build(),
                HttpResponse.BodyHandlers.ofString()).body();
        String closed = forceBreaker("maintenance", "closed");

        assertThat(JsonPath.<String>read(opened, "$.state")).isEqualTo("open");
        assertThat(JsonPath.<String>read(health, "$.components.stagger.details.maintenance.state")).isEqualTo("open");
        assertThat(JsonPath.<String>read(closed, "$.state")).isEqualTo("closed");
        assertThat(JsonPath.<java.util.List<Object>>read(closed, "$.transitions")).hasSize(2);
    }

    @Test
    void theHealthContributorReportsEachBreaker() throws Exception {
        String json = jdk.send(HttpRequest.newBuilder(URI.create(base() + "/actuator/health")).build(),
                HttpResponse.BodyHandlers.ofString()).body();
        // members of a JSON object have no order: read them by name
        Map<String, Object> payments = JsonPath.read(json, "$.components.stagger.details.payments");
        assertThat(payments).containsOnly(Map.entry("state", "closed"), Map.entry("status", "UP"));
        assertThat(JsonPath.<String>read(json, "$.components.stagger.status")).isEqualTo("UP");
    }

    @Test
    void prometheusShowsStaggerSeriesForRetriesBreakersAndBudgets() throws Exception {
        restClient().post().uri("/downstream/charges").body("1").retrieve().body(String.class);
        String scrape = jdk.send(HttpRequest.newBuilder(URI.create(base() + "/actuator/prometheus")).build(),
                HttpResponse.BodyHandlers.ofString()).body();
        assertThat(scrape).contains("stagger_calls_total{name=\"payments\",reason=\"recovered\"}")
                .contains("stagger_circuit_state{name=\"payments\"}")
                .contains("stagger_budget_tokens{name=\"shared\"}");
    }
}
