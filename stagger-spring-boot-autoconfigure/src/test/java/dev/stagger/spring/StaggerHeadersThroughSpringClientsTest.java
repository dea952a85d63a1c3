package dev.stagger.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import com.sun.net.httpserver.HttpServer;
import dev.stagger.testing.VirtualClock;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.http.HttpClient;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.http.client.reactive.JdkClientHttpConnector;
import org.springframework.web.client.HttpServerErrorException;
import org.springframework.web.client.RestClient;
import org.springframework.web.reactive.function.client.WebClient;
import org.springframework.web.reactive.function.client.WebClientResponseException;

/**
 * Spring's clients through Stagger's interceptor and filter send the remaining deadline on every
 * attempt and do not retry an answer carrying {@code Stagger-No-Retry} (unless its host is listed
 * as untrusted).
 */
class StaggerHeadersThroughSpringClientsTest {
    private HttpServer server;
    /** The Stagger-Deadline-Ms of each request received (null when absent). */
    private final List<String> deadlines = new CopyOnWriteArrayList<>();
    private volatile String noRetry;

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(StaggerAutoConfiguration.class, StaggerHttpAutoConfiguration.class))
            .withBean(VirtualClock.class, VirtualClock::new)
            .withPropertyValues(
                    "stagger.retries.default.max-attempts=3",
                    "stagger.retries.default.backoff.type=fixed",
                    "stagger.retries.default.backoff.base=100ms",
                    "stagger.retries.default.backoff.jitter=none",
                    "stagger.retries.default.deadline=2s",
                    "stagger.retries.default.budget=none");

    @BeforeEach
    void startStub() throws IOException {
        server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        server.createContext("/", exchange -> {
            deadlines.add(exchange.getRequestHeaders().getFirst("Stagger-Deadline-Ms"));
            if (noRetry != null) {
                exchange.getResponseHeaders().add("Stagger-No-Retry", noRetry);
            }
            exchange.sendResponseHeaders(503, -1);
            exchange.close();
        });
        server.start();
    }

    @AfterEach
    void stopStub() {
        server.stop(0);
    }

    private String base() {
        return "http://127.0.0.1:" + server.getAddress().getPort();
    }

    private RestClient restClient(StaggerHttp http) {
        return RestClient.builder().baseUrl(base()).requestInterceptor(http.interceptor("inventory")).build();
    }

    @Test
    void theInterceptorSendsTheMillisecondsLeftOnEveryAttempt() {
        runner.run(context -> {
            Throwable thrown = catchThrowable(() -> restClient(context.getBean(StaggerHttp.class)).get().uri("/stock")
                    .retrieve().body(String.class));
            assertThat(thrown).isInstanceOf(HttpServerErrorException.class);
            assertThat(deadlines).containsExactly("2000", "1900", "1800");
        });
    }

    @Test
    void theInterceptorDoesNotRetryAnAnswerSayingDoNotRetry() {
        noRetry = "gave-up";
        runner.run(context -> {
            catchThrowable(() -> restClient(context.getBean(StaggerHttp.class)).get().uri("/stock").retrieve().body(String.class));
            assertThat(deadlines).hasSize(1);
        });
    }

    @Test
    void anUntrustedHostsAnswerIsRetriedAnyway() {
        noRetry = "gave-up";
        runner.withPropertyValues("stagger.http.clients.inventory.untrusted-hosts=127.0.0.1").run(context -> {
            catchThrowable(() -> restClient(context.getBean(StaggerHttp.class)).get().uri("/stock").retrieve().body(String.class));
            assertThat(deadlines).hasSize(3);
        });
    }

    @Test
    void theWebClientFilterSendsTheDeadlineAndHonoursDoNotRetry() {
        noRetry = "circuit-open";
        runner.withConfiguration(AutoConfigurations.of(StaggerHttpAutoConfiguration.class)).run(context -> {
            WebClient client = WebClient.builder().baseUrl(base())
                    .clientConnector(new JdkClientHttpConnector(HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build()))
                    .filter(context.getBean(StaggerWebClient.class).filter("inventory")).build();
            Throwable thrown = catchThrowable(() -> client.get().uri("/stock").retrieve().bodyToMono(String.class)
                    .toFuture().get(20, TimeUnit.SECONDS));
            assertThat(thrown).hasCauseInstanceOf(WebClientResponseException.ServiceUnavailable.class);
            assertThat(deadlines).containsExactly("2000");
        });
    }
}
