package dev.stagger.spring;

import static org.assertj.core.api.Assertions.assertThat;

import com.sun.net.httpserver.HttpServer;
import dev.stagger.CircuitBreaker;
import dev.stagger.testing.VirtualClock;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.web.client.RestClient;
import org.springframework.web.client.RestClientException;

/**
 * A client name that is not listed under {@code stagger.http.clients} (allowed: it gets the
 * {@code default} entry) against a downstream on loopback answering 503 to everything: its
 * breaker counts the 503s exactly as for a listed client.
 */
class UnlistedHttpClientTest {
    private HttpServer server;
    private final AtomicInteger requests = new AtomicInteger();

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(StaggerAutoConfiguration.class, StaggerHttpAutoConfiguration.class))
            .withBean(VirtualClock.class, VirtualClock::new)
            .withPropertyValues("stagger.retries.default.max-attempts=1",
                    "stagger.circuit-breakers.ledger.consecutive-failures=5",
                    "stagger.circuit-breakers.ledger.minimum-calls=100");

    @BeforeEach
    void startDownstream() throws Exception {
        server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        server.createContext("/", exchange -> {
            requests.incrementAndGet();
            exchange.getRequestBody().readAllBytes();
            exchange.sendResponseHeaders(503, -1);
            exchange.close();
        });
        server.start();
    }

    @AfterEach
    void stopDownstream() {
        server.stop(0);
    }

    private int callThirtyTimes(StaggerHttp http, String client) {
        RestClient rest = RestClient.builder()
                .baseUrl("http://127.0.0.1:" + server.getAddress().getPort())
                .requestInterceptor(http.interceptor(client)).build();
        int failed = 0;
        for (int i = 0; i < 30; i++) {
            try {
                rest.get().uri("/balance").retrieve().body(String.class);
            } catch (RestClientException | dev.stagger.RetryRefusedException expected) {
                failed++; // a 503, or the open breaker's refusal
            }
        }
        return failed;
    }

    @Test
    void theBreakerOfAnUnlistedClientCountsIts503sAndOpens() {
        runner.run(context -> {
            StaggerHttp http = context.getBean(StaggerHttp.class);
            assertThat(callThirtyTimes(http, "ledger")).isEqualTo(30);

            CircuitBreaker breaker = context.getBean(StaggerRegistry.class).circuitBreaker("ledger");
            assertThat(breaker.metrics().state()).isEqualTo(CircuitBreaker.State.OPEN);
            assertThat(requests).hasValue(5); // the rest were refused without reaching the downstream
        });
    }

    @Test
    void aListedClientBehavesTheSame() {
        runner.withPropertyValues("stagger.http.clients.ledger.keys-honoured=true").run(context -> {
            assertThat(callThirtyTimes(context.getBean(StaggerHttp.class), "ledger")).isEqualTo(30);

            CircuitBreaker breaker = context.getBean(StaggerRegistry.class).circuitBreaker("ledger");
            assertThat(breaker.metrics().state()).isEqualTo(CircuitBreaker.State.OPEN);
            assertThat(requests).hasValue(5);
        });
    }
}
