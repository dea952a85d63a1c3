package dev.stagger.spring.cloud;

import static org.assertj.core.api.Assertions.assertThat;

import com.sun.net.httpserver.HttpServer;
import dev.stagger.CircuitBreaker;
import dev.stagger.spring.StaggerRegistry;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
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
import org.springframework.context.annotation.Bean;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;

/**
 * Spring Cloud OpenFeign's circuit-breaker support ({@code spring.cloud.openfeign.circuitbreaker.enabled})
 * runs on Stagger: a Feign client's method is a Spring Cloud id ({@code PricingClientpriceString}),
 * which gets a Stagger breaker of its own from {@code stagger.circuit-breakers.default}; the
 * client's fallback answers a failure and a refusal. Against a stub answering 503 on loopback.
 */
@SpringBootTest(classes = OpenFeignOnStaggerTest.App.class, webEnvironment = SpringBootTest.WebEnvironment.NONE,
        properties = {
                "spring.cloud.openfeign.circuitbreaker.enabled=true",
                "stagger.circuit-breakers.default.consecutive-failures=1",
        })
class OpenFeignOnStaggerTest {
    /** The id Spring Cloud OpenFeign gives {@link PricingClient#price} (alphanumeric ids, its default). */
    static final String ID = "PricingClientpriceString";

    static final AtomicInteger REQUESTS = new AtomicInteger();
    static final HttpServer STUB = stub();

    private static HttpServer stub() {
        try {
            HttpServer server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
            server.createContext("/", exchange -> {
                REQUESTS.incrementAndGet();
                exchange.sendResponseHeaders(503, -1);
                exchange.close();
            });
            server.start();
            return server;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @DynamicPropertySource
    static void pricingUrl(DynamicPropertyRegistry properties) {
        properties.add("pricing.url", () -> "http://127.0.0.1:" + STUB.getAddress().getPort());
    }

    @AfterAll
    static void stopStub() {
        STUB.stop(0);
    }

    @FeignClient(name = "pricing", url = "${pricing.url}", fallback = PricingFallback.class)
    interface PricingClient {
        @GetMapping("/price/{sku}")
        String price(@PathVariable("sku") String sku);
    }

    static class PricingFallback implements PricingClient {
        @Override
        public String price(String sku) {
            return "unavailable";
        }
    }

    @SpringBootConfiguration
    @EnableAutoConfiguration
    @EnableFeignClients(clients = PricingClient.class)
    static class App {
        @Bean
        PricingFallback pricingFallback() {
            return new PricingFallback();
        }
    }

    @Autowired
    PricingClient pricing;
    @Autowired
    StaggerRegistry registry;

    @BeforeEach
    void closeTheBreaker() {
        if (registry.circuitBreakers().containsKey(ID)) {
            registry.circuitBreaker(ID).reset();
        }
        REQUESTS.set(0);
    }

    @Test
    void aFailedFeignCallGoesToItsFallbackAndOpensTheIdsStaggerBreaker() {
        assertThat(pricing.price("sku-1")).isEqualTo("unavailable");

        assertThat(REQUESTS).hasValue(1);
        assertThat(registry.circuitBreakers().get(ID).state()).isEqualTo(CircuitBreaker.State.OPEN);
    }

    @Test
    void whileTheBreakerIsOpenFeignCallsDoNotReachTheServer() {
        pricing.price("sku-1");

        assertThat(pricing.price("sku-2")).isEqualTo("unavailable");
        assertThat(REQUESTS).hasValue(1);
    }
}
