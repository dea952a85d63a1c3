package dev.stagger.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import dev.stagger.testing.VirtualClock;
import java.io.IOException;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.stereotype.Service;
import org.springframework.web.client.HttpClientErrorException;
import org.springframework.web.client.HttpServerErrorException;
import org.springframework.web.client.RestClient;

/**
 * A Boot application composing Stagger's parts as its users write them: a {@code @Service} method
 * with {@code @StaggerRetry} calling a {@code RestClient} built with Stagger's interceptor. Each
 * failure is retried by one layer only, the interceptor's, which sees the status.
 */
class NestedRetriesThroughRestClientTest {
    private StatusStub stub;

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(StaggerAutoConfiguration.class, StaggerHttpAutoConfiguration.class))
            .withUserConfiguration(Beans.class)
            .withPropertyValues(
                    "stagger.retries.default.max-attempts=4",
                    "stagger.retries.default.backoff.type=fixed",
                    "stagger.retries.default.backoff.base=100ms",
                    "stagger.retries.default.backoff.jitter=none",
                    "stagger.retries.orders.max-attempts=5");

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
        VirtualClock clock() {
            return new VirtualClock();
        }

        @Bean
        OrderService orderService(StaggerHttp http) {
            return new OrderService(http);
        }
    }

    @Service
    static class OrderService {
        private final StaggerHttp http;
        final AtomicInteger calls = new AtomicInteger();
        volatile String baseUrl;
        volatile boolean failAfterTheCall;

        OrderService(StaggerHttp http) {
            this.http = http;
        }

        public int calls() {
            return calls.get();
        }

        public void configure(String baseUrl, boolean failAfterTheCall) {
            this.baseUrl = baseUrl;
            this.failAfterTheCall = failAfterTheCall;
        }

        @StaggerRetry("orders")
        public String order(String id) {
            calls.incrementAndGet();
            RestClient client = RestClient.builder().baseUrl(baseUrl)
                    .requestInterceptor(http.interceptor("inventory")).build();
            String body = client.get().uri("/orders/{id}", id).retrieve().body(String.class);
            if (failAfterTheCall) {
                throw new IllegalStateException("deadlock detected");
            }
            return body == null ? "" : body;
        }
    }

    private String base() {
        return stub.base();
    }

    @Test
    void a503IsRetriedByTheInterceptorOnlyNotAgainByTheAnnotation() {
        stub.status = 503;
        runner.run(context -> {
            OrderService service = context.getBean(OrderService.class);
            service.configure(base(), false);

            Throwable thrown = catchThrowable(() -> service.order("42"));

            assertThat(thrown).isInstanceOf(HttpServerErrorException.class);
            assertThat(stub.requests).as("the interceptor's 4 attempts, not 4 x 5").hasValue(4);
            assertThat(service.calls()).isOne();
        });
    }

    @Test
    void a404IsNotRetriedByTheAnnotation() {
        stub.status = 404;
        runner.run(context -> {
            OrderService service = context.getBean(OrderService.class);
            service.configure(base(), false);

            Throwable thrown = catchThrowable(() -> service.order("42"));

            assertThat(thrown).isInstanceOf(HttpClientErrorException.NotFound.class);
            assertThat(stub.requests).hasValue(1);
            assertThat(service.calls()).isOne();
        });
    }

    @Test
    void aFailureOfTheMethodItselfIsRetriedByTheAnnotation() {
        stub.status = 200;
        runner.run(context -> {
            OrderService service = context.getBean(OrderService.class);
            service.configure(base(), true);

            Throwable thrown = catchThrowable(() -> service.order("42"));

            assertThat(thrown).isInstanceOf(IllegalStateException.class).hasMessage("deadlock detected");
            assertThat(service.calls()).as("the annotation's 5 attempts").isEqualTo(5);
            assertThat(stub.requests).hasValue(5);
        });
    }

    @Test
    void retryAgainIsAskedForByProperty() {
        stub.status = 503;
        runner.withPropertyValues("stagger.retries.orders.nesting=retry-again").run(context -> {
            OrderService service = context.getBean(OrderService.class);
            service.configure(base(), false);

            catchThrowable(() -> service.order("42"));

            assertThat(stub.requests).as("4 interceptor attempts in each of the annotation's 5: multiplied on purpose").hasValue(20);
        });
    }

    @Test
    void refuseIsAskedForByProperty() {
        stub.status = 503;
        runner.withPropertyValues("stagger.retries.orders.nesting=refuse").run(context -> {
            OrderService service = context.getBean(OrderService.class);
            service.configure(base(), false);

            Throwable thrown = catchThrowable(() -> service.order("42"));

            assertThat(thrown).isInstanceOf(dev.stagger.RetryNestingException.class).hasMessageContaining("'orders'");
            assertThat(stub.requests).as("the inner call never ran").hasValue(0);
        });
    }
}
