package dev.stagger.spring.cloud;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.sun.net.httpserver.HttpServer;
import feign.FeignException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.cloud.openfeign.EnableFeignClients;
import org.springframework.cloud.openfeign.FeignClient;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;

/**
 * Spring Cloud OpenFeign clients configured from {@code stagger.feign.clients}: the mapped client
 * is retried by the named Stagger HTTP client's rules (its 503s retried, the same Idempotency-Key
 * on every attempt of a POST), an unmapped one is sent once. Against a stub on loopback that
 * answers 503 twice, then 200.
 */
@SpringBootTest(classes = OpenFeignRetriesFromPropertiesTest.App.class, webEnvironment = SpringBootTest.WebEnvironment.NONE,
        properties = {
                "stagger.feign.clients.pricing=pricing-api",
                "stagger.http.clients.pricing-api.keys-honoured=true",
                "stagger.retries.default.max-attempts=3",
                "stagger.retries.default.backoff.type=fixed",
                "stagger.retries.default.backoff.base=1ms",
                "stagger.retries.default.backoff.jitter=none",
                "stagger.retries.default.budget=none",
        })
class OpenFeignRetriesFromPropertiesTest {
    static final AtomicInteger REQUESTS = new AtomicInteger();
    static final List<String> KEYS = new CopyOnWriteArrayList<>();
    static final HttpServer STUB = stub();

    private static HttpServer stub() {
        try {
            HttpServer server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
            server.createContext("/", exchange -> {
                exchange.getRequestBody().readAllBytes();
                String key = exchange.getRequestHeaders().getFirst("Idempotency-Key");
                if (key != null) {
                    KEYS.add(key);
                }
                if (REQUESTS.incrementAndGet() % 3 != 0) {
                    exchange.sendResponseHeaders(503, -1);
                } else {
                    byte[] body = "42".getBytes(StandardCharsets.UTF_8);
                    exchange.sendResponseHeaders(200, body.length);
                    exchange.getResponseBody().write(body);
                }
                exchange.close();
            });
            server.start();
            return server;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @DynamicPropertySource
    static void stubUrl(DynamicPropertyRegistry properties) {
        properties.add("stub.url", () -> "http://127.0.0.1:" + STUB.getAddress().getPort());
    }

    @AfterAll
    static void stopStub() {
        STUB.stop(0);
    }

    @FeignClient(name = "pricing", url = "${stub.url}")
    interface PricingClient {
        @GetMapping("/price")
        String price();

        @PostMapping("/orders")
        String order(@RequestBody String order);
    }

    @FeignClient(name = "stock", url = "${stub.url}")
    interface StockClient {
        @GetMapping("/stock")
        String stock();
    }

    @SpringBootConfiguration
    @EnableAutoConfiguration
    @EnableFeignClients(clients = {PricingClient.class, StockClient.class})
    static class App {
    }

    @Autowired
    PricingClient pricing;
    @Autowired
    StockClient stock;

    @BeforeEach
    void reset() {
        REQUESTS.set(0);
        KEYS.clear();
    }

    @Test
    void aMappedClientsTransientStatusesAreRetriedByItsStaggerRules() {
        assertThat(pricing.price()).isEqualTo("42");

        assertThat(REQUESTS).hasValue(3);
    }

    @Test
    void aMappedClientsPostCarriesOneIdempotencyKeyOnEveryAttempt() {
        assertThat(pricing.order("one book")).isEqualTo("42");

        assertThat(KEYS).hasSize(3);
        assertThat(KEYS).containsOnly(KEYS.get(0));
    }

    @Test
    void anUnmappedClientIsSentOnce() {
        assertThatThrownBy(stock::stock).isInstanceOf(FeignException.ServiceUnavailable.class);

        assertThat(REQUESTS).hasValue(1);
    }
}
