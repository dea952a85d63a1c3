package dev.stagger.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import java.io.IOException;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.http.client.reactive.JdkClientHttpConnector;
import org.springframework.stereotype.Service;
import org.springframework.web.reactive.function.client.WebClient;
import org.springframework.web.reactive.function.client.WebClientResponseException;
import reactor.core.publisher.Mono;

/**
 * The reactive form of {@link NestedRetriesThroughRestClientTest}: a {@code @StaggerRetry} method
 * returning a {@code Mono} that calls a {@code WebClient} carrying Stagger's filter after its
 * pipeline moved to another thread. The attempt travels in the Reactor context, so the filter's
 * retry still runs inside it: each failure is retried by the filter only.
 */
class NestedReactiveRetriesThroughWebClientTest {
    private StatusStub stub;

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(StaggerAutoConfiguration.class, StaggerHttpAutoConfiguration.class))
            .withUserConfiguration(Beans.class)
            .withPropertyValues(
                    "stagger.retries.default.max-attempts=4",
                    "stagger.retries.default.backoff.type=none",
                    "stagger.retries.orders.max-attempts=5",
                    "stagger.retries.orders.backoff.type=none");

    @BeforeEach
    void startStub() throws IOException {
        stub = StatusStub.start();
    }

    @AfterEach
    void stopStub() {
        stub.close();
    }

    @Configuration(proxyBeanMethods = false)
    static class Beans {
        @Bean
        ReactiveOrders reactiveOrders(StaggerWebClient webClient) {
            return new ReactiveOrders(webClient);
        }
    }

    @Service
    static class ReactiveOrders {
        private final StaggerWebClient webClient;
        volatile String baseUrl;

        ReactiveOrders(StaggerWebClient webClient) {
            this.webClient = webClient;
        }

        public void configure(String baseUrl) {
            this.baseUrl = baseUrl;
        }

        @StaggerRetry("orders")
        public Mono<String> order(String id) {
            WebClient client = WebClient.builder().baseUrl(baseUrl).clientConnector(new JdkClientHttpConnector())
                    .filter(webClient.filter("inventory")).build();
            // the call is subscribed on a timer thread, not on the thread that started the attempt
            return Mono.delay(Duration.ofMillis(1))
                    .flatMap(ignored -> client.get().uri("/orders/{id}", id).retrieve().bodyToMono(String.class));
        }
    }

    private String base() {
        return stub.base();
    }

    @Test
    void a503IsRetriedByTheFilterOnlyNotAgainByTheAnnotation() {
        stub.status = 503;
        runner.run(context -> {
            ReactiveOrders orders = context.getBean(ReactiveOrders.class);
            orders.configure(base());

            Throwable thrown = catchThrowable(() -> orders.order("42").block(Duration.ofSeconds(30)));

            assertThat(thrown).isInstanceOf(WebClientResponseException.ServiceUnavailable.class);
            assertThat(stub.requests).as("the filter's 4 attempts, not 4 x 5").hasValue(4);
        });
    }

    @Test
    void a404IsNotRetriedByTheAnnotation() {
        stub.status = 404;
        runner.run(context -> {
            ReactiveOrders orders = context.getBean(ReactiveOrders.class);
            orders.configure(base());

            Throwable thrown = catchThrowable(() -> orders.order("42").block(Duration.ofSeconds(30)));

            assertThat(thrown).isInstanceOf(WebClientResponseException.NotFound.class);
            assertThat(stub.requests).hasValue(1);
        });
    }
}
