package dev.stagger.spring.app;

import static org.assertj.core.api.Assertions.assertThat;

import com.jayway.jsonpath.JsonPath;
import dev.stagger.spring.StaggerHttp;
import dev.stagger.spring.StaggerWebClient;
import dev.stagger.spring.TestAutoConfigurations;
import dev.stagger.testing.VirtualClock;
import dev.stagger.testsupport.Await;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpMethod;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.ResponseEntity;
import org.springframework.http.client.ClientHttpRequestExecution;
import org.springframework.http.client.ClientHttpRequestInterceptor;
import org.springframework.http.client.ClientHttpResponse;
import org.springframework.http.client.JdkClientHttpRequestFactory;
import org.springframework.http.client.reactive.ClientHttpConnector;
import org.springframework.http.client.reactive.ClientHttpRequest;
import org.springframework.http.client.reactive.ClientHttpResponseDecorator;
import org.springframework.http.client.reactive.JdkClientHttpConnector;
import org.springframework.web.client.HttpClientErrorException;
import org.springframework.web.client.RestClient;
import org.springframework.web.client.RestTemplate;
import org.springframework.web.reactive.function.client.WebClient;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

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
                "stagger.retries.inventory.max-attempts=3",
                "stagger.retries.reports.budget=none",
                "stagger.retries.payments.circuit-breaker=payments",
                "stagger.retries.payments.budget=shared",
                "stagger.circuit-breakers.payments.minimum-calls=50",
                "stagger.circuit-breakers.maintenance.consecutive-failures=5",
                "stagger.budgets.shared.ratio=0.5",
                "stagger.http.clients.payments.keys-honoured=true",
                "stagger.idempotency.enabled=true",
                "stagger.idempotency.paths=/orders",
                "stagger.idempotency.scope-header=X-Api-Key",
                "stagger.idempotency.table-prefix=stagger_spring_test_",
                "spring.autoconfigure.exclude=" + TestAutoConfigurations.JPA_AND_JOOQ
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
    @Autowired
    ShopApplication.Catalog catalog;
    @Autowired
    ShopApplication.Reports reports;

    private final HttpClient jdk = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

    @BeforeEach
    void reset() {
        downstream.charges.set(0);
        downstream.keys.clear();
        catalog.reset();
        reports.reset();
    }

    private String base() {
        return "http://127.0.0.1:" + port;
    }

    private RestClient restClient() {
        return RestClient.builder().baseUrl(base()).requestFactory(new JdkClientHttpRequestFactory(jdk))
                .requestInterceptor(http.interceptor("payments")).build();
    }

    private HttpResponse<String> get(String path, String... headers) throws Exception {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(base() + path)).timeout(Duration.ofSeconds(20));
        if (headers.length > 0) {
            request.headers(headers);
        }
        return jdk.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void aFailureARetryGaveUpOnIsAnsweredWithDoNotRetry() throws Exception {
        HttpResponse<String> answer = get("/reports");
        assertThat(answer.statusCode()).isEqualTo(500);
        assertThat(answer.headers().firstValue("Stagger-No-Retry")).hasValue("gave-up");
        assertThat(reports.attempts()).isEqualTo(3);
    }

    @Test
    void theCallersDeadlineBoundsTheRetriesOfTheRequest() throws Exception {
        // waits of 100 ms: the second attempt at 100 ms, a third at 200 ms would pass the 150 ms
        HttpResponse<String> answer = get("/reports", "Stagger-Deadline-Ms", "150");
        assertThat(answer.statusCode()).isEqualTo(500);
        assertThat(answer.headers().firstValue("Stagger-No-Retry")).hasValue("deadline");
        assertThat(reports.attempts()).isEqualTo(2);
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
        Duration before = clock.now();
        CompletableFuture<String> result = client.post().uri("/downstream/charges").bodyValue("7")
                .retrieve().bodyToMono(String.class).toFuture();

        assertThat(awaitMovingTheClock(result)).isEqualTo("charged 7");
        assertThat(downstream.keys).hasSize(2);
        assertThat(downstream.keys.get(0)).isEqualTo(downstream.keys.get(1)).matches("\"[0-9a-f-]{36}\"");
        // the retry was scheduled no earlier than Retry-After: 2 s (the policy's own wait is 100 ms)
        assertThat(clock.now().minus(before)).isGreaterThanOrEqualTo(Duration.ofSeconds(2));
    }

    @Test
    void aWebClientRetryReleasesTheBodyOfTheResponseItThrowsAway() throws Exception {
        BodyTrackingConnector connector = new BodyTrackingConnector(new JdkClientHttpConnector(jdk));
        WebClient client = WebClient.builder().baseUrl(base()).clientConnector(connector)
                .filter(webClient.filter("payments")).build();

        String body = awaitMovingTheClock(client.post().uri("/downstream/charges").bodyValue("8")
                .retrieve().bodyToMono(String.class).toFuture());

        assertThat(body).isEqualTo("charged 8");
        assertThat(connector.received).hasValue(2);
        // the 503's body is released by the filter (nobody else ever sees it), the 201's by bodyToMono;
        // a body nobody subscribes to holds its connection forever
        Await.within(Await.LIMIT, () -> connector.released.size() >= 2);
        assertThat(connector.released).containsExactlyInAnyOrder(1, 2);
    }

    @Test
    void aRestClientRetryClosesTheResponseItThrowsAwayBeforeWaiting() {
        ResponseTracker tracker = new ResponseTracker(clock);
        RestClient client = RestClient.builder().baseUrl(base()).requestFactory(new JdkClientHttpRequestFactory(jdk))
                .requestInterceptor(http.interceptor("payments")).requestInterceptor(tracker).build();

        assertThat(client.post().uri("/downstream/charges").body("5").retrieve().body(String.class)).isEqualTo("charged 5");

        tracker.assertTheRetriedResponseWasClosedBeforeTheWait();
    }

    @Test
    void aRestTemplatePostIsRetriedAfter503WaitingRetryAfterWithOneKeyAndClosingTheRetriedResponse() {
        ResponseTracker tracker = new ResponseTracker(clock);
        RestTemplate template = new RestTemplate(new JdkClientHttpRequestFactory(jdk));
        template.getInterceptors().add(http.interceptor("payments"));
        template.getInterceptors().add(tracker);
        Duration before = clock.now();

        ResponseEntity<String> response = template.postForEntity(base() + "/downstream/charges", "43", String.class);

        assertThat(response.getStatusCode().value()).isEqualTo(201);
        assertThat(response.getBody()).isEqualTo("charged 43");
        assertThat(downstream.keys).hasSize(2);
        assertThat(downstream.keys.get(0)).isEqualTo(downstream.keys.get(1)).matches("\"[0-9a-f-]{36}\"");
        assertThat(clock.now().minus(before)).isGreaterThanOrEqualTo(Duration.ofSeconds(2));
        tracker.assertTheRetriedResponseWasClosedBeforeTheWait();
    }

    /** Waits for {@code result}, moving the virtual clock on which the retries' waits are scheduled. */
    private <T> T awaitMovingTheClock(CompletableFuture<T> result) throws Exception {
        Await.runUntilDone(result, Duration.ofSeconds(20), () -> clock.pendingTasks() > 0, clock::runUntilIdle);
        return result.get(1, TimeUnit.SECONDS);
    }

    private CompletableFuture<HttpResponse<String>> getAsync(String path) {
        return jdk.sendAsync(HttpRequest.newBuilder(URI.create(base() + path)).build(), HttpResponse.BodyHandlers.ofString());
    }

    /**
     * An interceptor added after Stagger's: sees every attempt's response and records, on the
     * virtual clock, when it was sent and when it was closed.
     */
    static final class ResponseTracker implements ClientHttpRequestInterceptor {
        record Event(String what, int attempt, long atMillis) {
        }

        final List<Event> events = new CopyOnWriteArrayList<>();
        private final AtomicInteger attempts = new AtomicInteger();
        private final VirtualClock clock;

        ResponseTracker(VirtualClock clock) {
            this.clock = clock;
        }

        @Override
        public ClientHttpResponse intercept(org.springframework.http.HttpRequest request, byte[] body,
                                            ClientHttpRequestExecution execution) throws IOException {
            int attempt = attempts.incrementAndGet();
            events.add(new Event("sent", attempt, clock.now().toMillis()));
            ClientHttpResponse response = execution.execute(request, body);
            return new ClientHttpResponse() {
                @Override
                public HttpStatusCode getStatusCode() throws IOException {
                    return response.getStatusCode();
                }

                @Override
                public String getStatusText() throws IOException {
                    return response.getStatusText();
                }

                @Override
                public HttpHeaders getHeaders() {
                    return response.getHeaders();
                }

                @Override
                public InputStream getBody() throws IOException {
                    return response.getBody();
                }

                @Override
                public void close() {
                    events.add(new Event("closed", attempt, clock.now().toMillis()));
                    response.close();
                }
            };
        }

        /** The 503 closed before the Retry-After wait, then the second attempt, and the 201 closed by the client. */
        void assertTheRetriedResponseWasClosedBeforeTheWait() {
            assertThat(events).hasSizeGreaterThanOrEqualTo(4);
            Event sent1 = events.get(0);
            Event closed1 = events.get(1);
            Event sent2 = events.get(2);
            assertThat(List.of(sent1.what() + " " + sent1.attempt(), closed1.what() + " " + closed1.attempt(),
                    sent2.what() + " " + sent2.attempt())).containsExactly("sent 1", "closed 1", "sent 2");
            assertThat(closed1.atMillis()).isEqualTo(sent1.atMillis()); // before the wait, not after it
            assertThat(sent2.atMillis() - sent1.atMillis()).isGreaterThanOrEqualTo(2000);
            assertThat(events.subList(3, events.size())).extracting(e -> e.what() + " " + e.attempt()).contains("closed 2")
                    .doesNotContain("sent 3");
        }
    }

    /** A connector that numbers each attempt's response and records whose body was consumed or released. */
    static final class BodyTrackingConnector implements ClientHttpConnector {
        final AtomicInteger received = new AtomicInteger();
        final Set<Integer> released = ConcurrentHashMap.newKeySet();
        private final ClientHttpConnector delegate;

        BodyTrackingConnector(ClientHttpConnector delegate) {
            this.delegate = delegate;
        }

        @Override
        public Mono<org.springframework.http.client.reactive.ClientHttpResponse> connect(
                HttpMethod method, URI uri, Function<? super ClientHttpRequest, Mono<Void>> requestCallback) {
            return delegate.connect(method, uri, requestCallback).map(response -> {
                int attempt = received.incrementAndGet();
                return new ClientHttpResponseDecorator(response) {
                    @Override
                    public Flux<DataBuffer> getBody() {
                        return super.getBody().doFinally(signal -> released.add(attempt));
                    }
                };
            });
        }
    }

    @Test
    void theAnnotatedBeanMethodIsRetried() {
        assertThat(inventory.reserve()).isEqualTo(2);
    }

    @Test
    void anAnnotatedCompletableFutureMethodIsRetriedOnTheClockWithoutBlockingAThread() throws Exception {
        int sleeps = clock.sleeps().size();
        Duration before = clock.now();

        CompletableFuture<String> price = catalog.price("tea");

        assertThat(price).isNotDone(); // the retry waits on the clock's scheduler, no thread sleeps
        clock.runUntilIdle();
        assertThat(price.get(5, TimeUnit.SECONDS)).isEqualTo("tea costs 9.99 (attempt 2)");
        assertThat(clock.now().minus(before)).isGreaterThanOrEqualTo(Duration.ofMillis(100)); // the policy's wait
        assertThat(clock.sleeps()).hasSize(sleeps);
    }

    @Test
    void anAnnotatedMonoIsSubscribedAgainOnStaggersScheduleOnlyOnceSubscribed() throws Exception {
        Mono<String> stock = catalog.stock("tea");
        assertThat(catalog.attempts().get(1)).isZero(); // nothing happens before subscription

        CompletableFuture<String> result = stock.toFuture();

        assertThat(result).isNotDone();
        clock.runUntilIdle();
        assertThat(result.get(5, TimeUnit.SECONDS)).isEqualTo("tea: 3 in stock (subscription 2)");
    }

    @Test
    void theServiceServesAnnotatedCompletableFutureMonoAndFluxMethodsThatFailedOnceOverHttp() throws Exception {
        HttpResponse<String> price = awaitMovingTheClock(getAsync("/catalog/tea/price"));
        HttpResponse<String> stock = awaitMovingTheClock(getAsync("/catalog/tea/stock"));
        HttpResponse<String> variants = awaitMovingTheClock(getAsync("/catalog/tea/variants"));

        assertThat(price.statusCode()).as(price.body()).isEqualTo(200);
        assertThat(price.body()).isEqualTo("tea costs 9.99 (attempt 2)");
        assertThat(stock.statusCode()).as(stock.body()).isEqualTo(200);
        assertThat(stock.body()).isEqualTo("tea: 3 in stock (subscription 2)");
        assertThat(variants.statusCode()).as(variants.body()).isEqualTo(200);
        // a retried Flux repeats what the failed attempt had emitted (documented)
        assertThat(JsonPath.<List<String>>read(variants.body(), "$")).containsExactly("tea-red", "tea-red", "tea-blue");
        assertThat(catalog.attempts()).containsExactly(2, 2, 2);
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

    private HttpResponse<String> orderAs(String user, String password, String key) throws Exception {
        String basic = java.util.Base64.getEncoder().encodeToString((user + ":" + password).getBytes(java.nio.charset.StandardCharsets.UTF_8));
        return jdk.send(HttpRequest.newBuilder(URI.create(base() + "/orders"))
                .header("Content-Type", "text/plain").header("Authorization", "Basic " + basic).header("Idempotency-Key", key)
                .POST(HttpRequest.BodyPublishers.ofString("{}")).build(), HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void theSpringSecurityPrincipalScopesTheKeysSoTwoClientsSendingOneKeyGetTheirOwnResponses() throws Exception {
        String key = "\"basket-" + System.nanoTime() + "\""; // no X-Api-Key: only the principal names the client
        HttpResponse<String> alice = orderAs("alice", "alice-secret", key);
        HttpResponse<String> aliceAgain = orderAs("alice", "alice-secret", key);
        HttpResponse<String> bob = orderAs("bob", "bob-secret", key);

        assertThat(alice.statusCode()).as(alice.body()).isEqualTo(201);
        assertThat(aliceAgain.statusCode()).isEqualTo(201);
        assertThat(aliceAgain.body()).isEqualTo(alice.body());
        assertThat(aliceAgain.headers().firstValue("Idempotent-Replayed")).contains("true");
        assertThat(bob.statusCode()).as(bob.body()).isEqualTo(201);
        assertThat(bob.body()).isNotEqualTo(alice.body()); // bob's own order, not alice's stored response
        assertThat(bob.headers().firstValue("Idempotent-Replayed")).isNotEqualTo(java.util.Optional.of("true"));
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

    private HttpResponse<String> postToBreaker(String name, String body) throws Exception {
        return jdk.send(HttpRequest.newBuilder(URI.create(base() + "/actuator/stagger/" + name))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void aMisspeltBreakerOrStateAnswers400WithTheReasonAndChangesNothing() throws Exception {
        HttpResponse<String> noSuchBreaker = postToBreaker("maintenanse", "{\"state\":\"open\"}");
        HttpResponse<String> noSuchState = postToBreaker("maintenance", "{\"state\":\"opne\"}");
        HttpResponse<String> readUnknown = jdk.send(HttpRequest.newBuilder(
                URI.create(base() + "/actuator/stagger/maintenanse")).build(), HttpResponse.BodyHandlers.ofString());

        assertThat(noSuchBreaker.statusCode()).isEqualTo(400);
        assertThat(JsonPath.<String>read(noSuchBreaker.body(), "$.message"))
                .contains("no circuit breaker named maintenanse").contains("maintenance");
        assertThat(noSuchState.statusCode()).isEqualTo(400);
        assertThat(JsonPath.<String>read(noSuchState.body(), "$.message")).contains("state must be open or closed")
                .contains("opne");
        assertThat(readUnknown.statusCode()).isEqualTo(404);
        String state = jdk.send(HttpRequest.newBuilder(URI.create(base() + "/actuator/stagger/maintenance")).build(),
                HttpResponse.BodyHandlers.ofString()).body();
        assertThat(JsonPath.<String>read(state, "$.state")).isEqualTo("closed");
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
