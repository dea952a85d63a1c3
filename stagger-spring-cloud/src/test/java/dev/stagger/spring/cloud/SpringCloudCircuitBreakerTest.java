package dev.stagger.spring.cloud;

import static org.assertj.core.api.Assertions.assertThat;

import com.jayway.jsonpath.JsonPath;
import dev.stagger.CircuitBreaker.State;
import dev.stagger.CircuitOpenException;
import dev.stagger.spring.StaggerRegistry;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.cloud.client.circuitbreaker.CircuitBreakerFactory;
import org.springframework.cloud.client.circuitbreaker.Customizer;
import org.springframework.context.annotation.Bean;

/**
 * Code written against Spring Cloud's {@link CircuitBreakerFactory}, in a Boot 4 application with
 * Spring Cloud 2025.1 on the class path, runs on Stagger's named breakers and retries; what it did
 * shows in Stagger's registry and, over HTTP on loopback, in its actuator endpoints. Each test uses
 * ids of its own, so the shared context's breakers do not mix.
 */
@SpringBootTest(classes = SpringCloudCircuitBreakerTest.App.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {
                "server.address=127.0.0.1",
                "management.endpoints.web.exposure.include=stagger,staggerevents",
                "stagger.circuit-breakers.default.consecutive-failures=1",
                "stagger.circuit-breakers.pricing.consecutive-failures=2",
                "stagger.circuit-breakers.shared.consecutive-failures=5",
                "stagger.circuit-breakers.inventory.consecutive-failures=5",
                "stagger.retries.inventory.max-attempts=3",
                "stagger.retries.inventory.backoff.type=none",
                "stagger.retries.inventory.budget=none",
        })
class SpringCloudCircuitBreakerTest {
    @SpringBootConfiguration
    @EnableAutoConfiguration
    static class App {
        /** Maps id {@code quotes} to breaker {@code shared}, as an application would in code. */
        @Bean
        Customizer<StaggerCircuitBreakerFactory> quotesOnTheSharedBreaker() {
            return factory -> factory.configure(b -> b.circuitBreaker("shared"), "quotes");
        }
    }

    @LocalServerPort
    int port;
    @Autowired
    CircuitBreakerFactory<?, ?> factory;
    @Autowired
    StaggerRegistry registry;

    private final HttpClient http = HttpClient.newHttpClient();

    private String actuator(String path) throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/actuator/" + path)).build(),
                HttpResponse.BodyHandlers.ofString()).body();
    }

    private static final Supplier<String> DOWN = () -> {
        throw new UncheckedIOException(new IOException("down"));
    };

    @Test
    void theFactoryIsStaggers() {
        assertThat(factory).isInstanceOf(StaggerCircuitBreakerFactory.class);
    }

    @Test
    void failuresThroughSpringCloudOpenStaggersBreakerAndTheActuatorShowsIt() throws Exception {
        factory.create("pricing").run(DOWN, failure -> "fallback");
        factory.create("pricing").run(DOWN, failure -> "fallback");

        assertThat(registry.circuitBreaker("pricing").state()).isEqualTo(State.OPEN);
        assertThat(JsonPath.<String>read(actuator("stagger/pricing"), "$.state")).isEqualTo("open");
    }

    @Test
    void theFallbackIsCalledWithTheFailure() {
        AtomicReference<Throwable> seen = new AtomicReference<>();

        String answer = factory.create("catalog").run(DOWN, failure -> {
            seen.set(failure);
            return "fallback";
        });

        assertThat(answer).isEqualTo("fallback");
        assertThat(seen.get()).isInstanceOf(UncheckedIOException.class).hasRootCauseMessage("down");
    }

    @Test
    void anOpenBreakerRefusesWithoutRunningTheCallAndTheFallbackGetsTheRefusal() {
        factory.create("orders").run(DOWN, failure -> "fallback"); // the default entry: one failure opens
        AtomicInteger calls = new AtomicInteger();

        Object answer = factory.create("orders").run(() -> "ran " + calls.incrementAndGet(), failure -> failure);

        assertThat(calls).hasValue(0);
        assertThat(answer).isInstanceOf(CircuitOpenException.class);
        assertThat(((CircuitOpenException) answer).circuitBreakerName()).isEqualTo("orders");
    }

    @Test
    void anIdConfiguredNowhereGetsItsOwnBreakerFromTheDefaultEntryListedInTheActuator() throws Exception {
        assertThat(factory.create("unforeseen").run(() -> "ok")).isEqualTo("ok");

        assertThat(registry.circuitBreakers()).containsKey("unforeseen");
        assertThat(JsonPath.<String>read(actuator("stagger"), "$.circuitBreakers.unforeseen.state")).isEqualTo("closed");
    }

    @Test
    void anIdWithAConfiguredRetryIsRetriedByItAndItsEventsShow() throws Exception {
        AtomicInteger calls = new AtomicInteger();

        String answer = factory.create("inventory").run(() -> {
            if (calls.incrementAndGet() < 3) {
                throw new IllegalStateException("not yet");
            }
            return "in stock";
        }, failure -> "fallback");

        assertThat(answer).isEqualTo("in stock");
        assertThat(calls).hasValue(3);
        List<String> types = JsonPath.read(actuator("staggerevents/inventory"), "$.events[*].type");
        assertThat(types).containsExactly("attempt", "retry", "attempt", "retry", "attempt");
    }

    @Test
    void aCustomizerBeanMapsAnIdOntoAnotherBreaker() {
        factory.create("quotes").run(DOWN, failure -> "fallback");

        assertThat(registry.circuitBreaker("shared").metrics().consecutiveFailures()).isEqualTo(1);
        assertThat(registry.circuitBreakers()).doesNotContainKey("quotes");
    }
}
