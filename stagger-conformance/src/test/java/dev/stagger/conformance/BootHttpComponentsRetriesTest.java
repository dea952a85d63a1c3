package dev.stagger.conformance;

import static dev.stagger.testsupport.http.FaultServer.status;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import dev.stagger.testsupport.http.FaultServer;
import dev.stagger.spring.StaggerAutoConfiguration;
import dev.stagger.spring.StaggerHttpAutoConfiguration;
import dev.stagger.spring.StaggerHttpComponentsAutoConfiguration;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.http.client.autoconfigure.HttpClientAutoConfiguration;
import org.springframework.boot.http.client.autoconfigure.imperative.ImperativeHttpClientAutoConfiguration;
import org.springframework.boot.restclient.RestTemplateBuilder;
import org.springframework.boot.restclient.autoconfigure.RestClientAutoConfiguration;
import org.springframework.boot.restclient.autoconfigure.RestTemplateAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.web.client.HttpServerErrorException;
import org.springframework.web.client.RestClient;
import org.springframework.web.client.RestTemplate;

/**
 * One retrying layer when Spring Boot builds {@code RestClient} and {@code RestTemplate} on Apache
 * HttpClient 5 (its choice whenever HttpClient 5 is on the class path) under Stagger's builders:
 * HttpClient's own {@code DefaultHttpRequestRetryStrategy} would resend a 503 carrying
 * {@code Retry-After} by itself, so each attempt Stagger makes would reach the server twice. The
 * server counts what it receives.
 */
class BootHttpComponentsRetriesTest {
    private FaultServer server;

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(HttpClientAutoConfiguration.class, ImperativeHttpClientAutoConfiguration.class,
                    RestClientAutoConfiguration.class, RestTemplateAutoConfiguration.class,
                    StaggerAutoConfiguration.class, StaggerHttpAutoConfiguration.class, StaggerHttpComponentsAutoConfiguration.class))
            .withPropertyValues(
                    "stagger.http.builders=orders",
                    "stagger.retries.orders.max-attempts=2",
                    "stagger.retries.orders.backoff.type=none",
                    "stagger.retries.orders.budget=none");

    @BeforeEach
    void start() throws Exception {
        server = new FaultServer();
    }

    @AfterEach
    void stop() throws Exception {
        server.close();
    }

    @Test
    void aRestClientOnHttpClient5SendsEachOfStaggersAttemptsOnce() {
        server.then(busy(), busy(), busy(), busy());
        runner.run(context -> {
            RestClient rest = context.getBean(RestClient.Builder.class).build();

            int status = rest.get().uri(server.uri("/items")).exchange((request, response) -> response.getStatusCode().value());

            assertThat(status).isEqualTo(503);
            assertThat(server.received()).as("two attempts by Stagger, none added by HttpClient").hasSize(2);
        });
    }

    @Test
    void aRestTemplateOnHttpClient5SendsEachOfStaggersAttemptsOnce() {
        server.then(busy(), busy(), busy(), busy());
        runner.run(context -> {
            RestTemplate template = context.getBean(RestTemplateBuilder.class).build();

            Throwable failure = catchThrowable(() -> template.getForObject(server.uri("/items"), String.class));

            assertThat(failure).isInstanceOf(HttpServerErrorException.ServiceUnavailable.class);
            assertThat(server.received()).as("two attempts by Stagger, none added by HttpClient").hasSize(2);
        });
    }

    /** A 503 whose {@code Retry-After: 0} HttpClient's default strategy would act on at once. */
    private static FaultServer.Step busy() {
        return status(503, Map.of("Retry-After", "0"), "busy");
    }
}
