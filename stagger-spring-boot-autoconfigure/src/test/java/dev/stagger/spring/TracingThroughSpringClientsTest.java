package dev.stagger.spring;

import static org.assertj.core.api.Assertions.assertThat;

import dev.stagger.testsupport.Await;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.EventData;
import io.opentelemetry.sdk.trace.data.SpanData;
import java.io.IOException;
import java.time.Duration;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.http.client.JdkClientHttpRequestFactory;
import org.springframework.http.client.reactive.JdkClientHttpConnector;
import org.springframework.web.client.RestClient;
import org.springframework.web.reactive.function.client.WebClient;
import reactor.core.publisher.Mono;

/**
 * Tracing configured the way a Boot application configures it: Micrometer Tracing's OpenTelemetry
 * bridge with Boot's auto-configuration ({@code management.tracing.sampling.probability=1.0}) and
 * the OpenTelemetry SDK's in-memory exporter as a {@code SpanExporter} bean. A call retried twice
 * through {@code RestClient}, {@code WebClient} or a {@code @StaggerRetry} method returning a
 * {@code Mono} is one Stagger call span with three attempt children, the waits as its events; each
 * HTTP attempt is its own client span, so the stub on loopback receives three distinct span ids in
 * one trace.
 */
class TracingThroughSpringClientsTest {
    private static final String ATTEMPT_NUMBER = "stagger.retry.attempt";

    private StatusStub stub;

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(TestAutoConfigurations.TRACING))
            .withConfiguration(AutoConfigurations.of(
                    org.springframework.boot.restclient.autoconfigure.RestClientAutoConfiguration.class,
                    org.springframework.boot.restclient.autoconfigure.RestClientObservationAutoConfiguration.class,
                    org.springframework.boot.webclient.autoconfigure.WebClientAutoConfiguration.class,
                    org.springframework.boot.webclient.autoconfigure.WebClientObservationAutoConfiguration.class,
                    StaggerObservabilityAutoConfiguration.class, StaggerAutoConfiguration.class,
                    StaggerHttpAutoConfiguration.class))
            .withUserConfiguration(Exporter.class)
            .withPropertyValues(
                    "management.tracing.sampling.probability=1.0",
                    "stagger.retries.default.max-attempts=3",
                    "stagger.retries.default.backoff.type=fixed",
                    "stagger.retries.default.backoff.base=10ms",
                    "stagger.retries.default.backoff.jitter=none",
                    "stagger.retries.stock.max-attempts=3",
                    "stagger.retries.inventory.max-attempts=3");

    @Configuration(proxyBeanMethods = false)
    static class Exporter {
        @Bean
        InMemorySpanExporter inMemorySpanExporter() {
            return InMemorySpanExporter.create();
        }

        @Bean
        ReactiveInventory reactiveInventory(WebClient.Builder builder) {
            return new ReactiveInventory(builder);
        }
    }

    /** A reactive method retried by Stagger, calling through Boot's observed {@code WebClient}. */
    static class ReactiveInventory {
        private final WebClient.Builder builder;
        volatile String baseUrl;

        ReactiveInventory(WebClient.Builder builder) {
            this.builder = builder;
        }

        public void configure(String baseUrl) {
            this.baseUrl = baseUrl;
        }

        @StaggerRetry("stock")
        public Mono<String> stock() {
            return builder.clone().baseUrl(baseUrl).clientConnector(new JdkClientHttpConnector()).build()
                    .get().uri("/stock").retrieve().bodyToMono(String.class).defaultIfEmpty("ok");
        }
    }

    @BeforeEach
    void startStub() throws IOException {
        stub = StatusStub.start();
        stub.unavailable.set(2);
    }

    @AfterEach
    void stopStub() {
        stub.close();
    }

    private static String attr(SpanData span, String key) {
        return span.getAttributes().get(AttributeKey.stringKey(key));
    }

    private static List<SpanData> spans(AssertableApplicationContext context) {
        context.getBean(SdkTracerProvider.class).forceFlush().join(10, TimeUnit.SECONDS);
        return context.getBean(InMemorySpanExporter.class).getFinishedSpanItems();
    }

    private static List<SpanData> named(List<SpanData> spans, String prefix) {
        return spans.stream().filter(s -> s.getName().startsWith(prefix))
                .sorted(Comparator.comparing(SpanData::getStartEpochNanos)).toList();
    }

    private static SpanData byId(List<SpanData> spans, String spanId) {
        return spans.stream().filter(s -> s.getSpanId().equals(spanId)).findFirst().orElseThrow(
                () -> new AssertionError("no finished span " + spanId));
    }

    /**
     * The finished span {@code spanId}, which may end just after the caller got its answer
     * (WebClient stops its own observation once the response is released): waited for, 10 s at most,
     * polling the exporter (no delay is being checked).
     */
    private static SpanData finished(AssertableApplicationContext context, String spanId) {
        Await.within(Await.LIMIT, () -> spans(context).stream().anyMatch(s -> s.getSpanId().equals(spanId)));
        return byId(spans(context), spanId);
    }

    /** The stub saw three requests, each its own span, all in one trace. */
    private List<String> assertThreeSpanIdsInOneTrace() {
        assertThat(stub.traceparents).hasSize(3).doesNotContain("none");
        assertThat(stub.traceparents.stream().map(t -> t.split("-")[1]).distinct()).as("one trace").hasSize(1);
        List<String> spanIds = stub.traceparents.stream().map(t -> t.split("-")[2]).toList();
        assertThat(spanIds).as("a span per attempt").doesNotHaveDuplicates();
        return spanIds;
    }

    /** One call span with three attempt children and two waits; each request the child of its attempt. */
    private static void assertCallWithThreeAttempts(List<SpanData> spans, String retry, List<String> requestSpanIds) {
        List<SpanData> calls = named(spans, "retry " + retry);
        assertThat(calls).hasSize(1);
        SpanData call = calls.get(0);
        assertThat(attr(call, "stagger.retry.reason")).isEqualTo("recovered");
        assertThat(call.getEvents()).extracting(EventData::getName)
                .containsExactly("wait PT0.01S before attempt 2", "wait PT0.01S before attempt 3");
        List<SpanData> attempts = named(spans, retry + " attempt");
        assertThat(attempts).hasSize(3).allSatisfy(a -> assertThat(a.getParentSpanId()).isEqualTo(call.getSpanId()));
        assertThat(attempts).extracting(a -> attr(a, ATTEMPT_NUMBER)).containsExactly("1", "2", "3");
        assertThat(attempts).extracting(a -> attr(a, "stagger.retry.decision")).containsExactly("retry", "retry", "recovered");
        for (int i = 0; i < 3; i++) {
            SpanData request = byId(spans, requestSpanIds.get(i));
            assertThat(request.getParentSpanId()).as("request %d is its attempt's child", i + 1)
                    .isEqualTo(attempts.get(i).getSpanId());
            assertThat(request.getTraceId()).isEqualTo(call.getTraceId());
        }
    }

    @Test
    void restClientAttemptsAreEachTheirOwnClientSpanWithTheResendCount() {
        runner.run(context -> {
            RestClient client = context.getBean(RestClient.Builder.class).baseUrl(stub.base())
                    .requestFactory(new JdkClientHttpRequestFactory())
                    .requestInterceptor(context.getBean(StaggerHttp.class).interceptor("inventory"))
                    .build();

            assertThat(client.get().uri("/stock").retrieve().toBodilessEntity().getStatusCode().value()).isEqualTo(200);

            List<String> spanIds = assertThreeSpanIdsInOneTrace();
            List<SpanData> spans = spans(context);
            assertCallWithThreeAttempts(spans, "inventory", spanIds);
            List<SpanData> requests = spanIds.stream().map(id -> byId(spans, id)).toList();
            assertThat(requests).extracting(r -> attr(r, "http.request.resend_count")).containsExactly(null, "1", "2");
            assertThat(requests).extracting(r -> attr(r, "http.response.status_code")).containsExactly("503", "503", "200");
            // RestClient's own span encloses the whole call
            SpanData call = named(spans, "retry inventory").get(0);
            assertThat(byId(spans, call.getParentSpanId()).getName()).isEqualTo("http get");
        });
    }

    @Test
    void webClientAttemptsAreEachTheirOwnClientSpanWithTheResendCount() {
        runner.run(context -> {
            WebClient client = context.getBean(WebClient.Builder.class).baseUrl(stub.base())
                    .clientConnector(new JdkClientHttpConnector())
                    .filter(context.getBean(StaggerWebClient.class).filter("inventory"))
                    .build();

            assertThat(client.get().uri("/stock").retrieve().toBodilessEntity().block(Duration.ofSeconds(10))
                    .getStatusCode().value()).isEqualTo(200);

            List<String> spanIds = assertThreeSpanIdsInOneTrace();
            List<SpanData> spans = spans(context);
            assertCallWithThreeAttempts(spans, "inventory", spanIds);
            assertThat(spanIds.stream().map(id -> attr(byId(spans, id), "http.request.resend_count")))
                    .containsExactly(null, "1", "2");
            SpanData call = named(spans, "retry inventory").get(0);
            assertThat(finished(context, call.getParentSpanId()).getName()).as("WebClient's own span encloses the call")
                    .isEqualTo("http get");
        });
    }

    @Test
    void aReactiveStaggerRetryMakesEachWebClientRequestTheChildOfItsAttempt() {
        runner.run(context -> {
            ReactiveInventory inventory = context.getBean(ReactiveInventory.class);
            inventory.configure(stub.base());

            assertThat(inventory.stock().block(Duration.ofSeconds(10))).isEqualTo("ok");

            List<String> spanIds = assertThreeSpanIdsInOneTrace();
            for (String id : spanIds) {
                assertThat(finished(context, id).getName()).as("WebClient's own span").isEqualTo("http get");
            }
            assertCallWithThreeAttempts(spans(context), "stock", spanIds);
        });
    }

    @Test
    void switchedOffThereAreNoStaggerSpansAndEveryAttemptCarriesTheEnclosingSpan() {
        runner.withPropertyValues("stagger.observation.enabled=false").run(context -> {
            RestClient client = context.getBean(RestClient.Builder.class).baseUrl(stub.base())
                    .requestFactory(new JdkClientHttpRequestFactory())
                    .requestInterceptor(context.getBean(StaggerHttp.class).interceptor("inventory"))
                    .build();

            client.get().uri("/stock").retrieve().toBodilessEntity();

            assertThat(stub.traceparents).hasSize(3).doesNotContain("none");
            assertThat(stub.traceparents).as("RestClient's one span").containsOnly(stub.traceparents.get(0));
            assertThat(spans(context)).extracting(SpanData::getName).doesNotContain("retry inventory")
                    .noneMatch(name -> name.startsWith("inventory attempt"));
        });
    }
}
