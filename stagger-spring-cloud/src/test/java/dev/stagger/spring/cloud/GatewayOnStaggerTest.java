package dev.stagger.spring.cloud;

import static org.assertj.core.api.Assertions.assertThat;

import com.sun.net.httpserver.HttpServer;
import dev.stagger.CircuitBreaker.State;
import dev.stagger.observability.RetryMetrics;
import dev.stagger.spring.StaggerRegistry;
import io.micrometer.core.instrument.MeterRegistry;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.cloud.client.circuitbreaker.ReactiveCircuitBreakerFactory;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.web.reactive.function.server.RequestPredicates;
import org.springframework.web.reactive.function.server.RouterFunction;
import org.springframework.web.reactive.function.server.RouterFunctions;
import org.springframework.web.reactive.function.server.ServerResponse;

/**
 * Spring Cloud Gateway (server, WebFlux) with a route through its {@code CircuitBreaker} filter,
 * running on Stagger's {@link ReactiveCircuitBreakerFactory}: a downstream on loopback that answers
 * 503 opens Stagger's breaker {@code pricing}, the route's fallback URI answers, and once the
 * breaker is open the downstream is no longer called. Stagger's breaker meters show the state and
 * the refusals.
 */
class GatewayOnStaggerTest {
    @SpringBootConfiguration
    @EnableAutoConfiguration
    static class GatewayApp {
        @Bean
        RouterFunction<ServerResponse> fallback() {
            return RouterFunctions.route(RequestPredicates.path("/fallback"), request -> ServerResponse.ok().bodyValue("fallback"));
        }
    }

    private HttpServer downstream;
    private final AtomicInteger downstreamCalls = new AtomicInteger();
    private ConfigurableApplicationContext gateway;
    private final HttpClient http = HttpClient.newHttpClient();

    @BeforeEach
    void start() throws Exception {
        downstream = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        downstream.createContext("/", exchange -> {
            downstreamCalls.incrementAndGet();
            byte[] body = "down".getBytes(StandardCharsets.UTF_8);
            exchange.sendResponseHeaders(503, body.length);
            exchange.getResponseBody().write(body);
            exchange.close();
        });
        downstream.start();
        String route = "spring.cloud.gateway.server.webflux.routes[0].";
        gateway = new SpringApplicationBuilder(GatewayApp.class)
                .web(WebApplicationType.REACTIVE)
                .properties(
                        "server.address=127.0.0.1",
                        "server.port=0",
                        route + "id=pricing",
                        route + "uri=http://127.0.0.1:" + downstream.getAddress().getPort(),
                        route + "predicates[0]=Path=/prices/**",
                        route + "filters[0].name=CircuitBreaker",
                        route + "filters[0].args.name=pricing",
                        route + "filters[0].args.fallbackUri=forward:/fallback",
                        route + "filters[0].args.statusCodes[0]=503",
                        "stagger.circuit-breakers.pricing.consecutive-failures=2",
                        "stagger.circuit-breakers.pricing.open-duration=10m",
                        // one attempt (Spring Cloud's contract), but a retry of the id's name gives the breaker its meters
                        "stagger.retries.pricing.max-attempts=1",
                        "stagger.retries.pricing.budget=none")
                .run();
    }

    @AfterEach
    void stop() {
        if (gateway != null) {
            gateway.close();
        }
        downstream.stop(0);
    }

    private HttpResponse<String> get(String path) throws Exception {
        int port = Integer.parseInt(gateway.getEnvironment().getProperty("local.server.port", "-1"));
        return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path)).build(),
                HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void aFailingDownstreamOpensStaggersBreakerAndTheFallbackAnswers() throws Exception {
        assertThat(gateway.getBean(ReactiveCircuitBreakerFactory.class)).isInstanceOf(StaggerReactiveCircuitBreakerFactory.class);

        for (int i = 0; i < 2; i++) {
            HttpResponse<String> answer = get("/prices/7");
            assertThat(answer.statusCode()).isEqualTo(200);
            assertThat(answer.body()).isEqualTo("fallback");
        }
        assertThat(downstreamCalls).hasValue(2);
        assertThat(gateway.getBean(StaggerRegistry.class).circuitBreaker("pricing").state()).isEqualTo(State.OPEN);

        HttpResponse<String> refused = get("/prices/7");

        assertThat(refused.body()).isEqualTo("fallback");
        assertThat(downstreamCalls).as("an open breaker sends nothing downstream").hasValue(2);
        MeterRegistry meters = gateway.getBean(MeterRegistry.class);
        assertThat(meters.get(RetryMetrics.CIRCUIT_STATE).tag("name", "pricing").gauge().value()).isEqualTo(2.0);
        assertThat(meters.get(RetryMetrics.CIRCUIT_REJECTED).tag("name", "pricing").functionCounter().count()).isEqualTo(1.0);
    }
}
