package dev.stagger.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import com.sun.net.httpserver.HttpServer;
import dev.stagger.AttemptTimeoutException;
import dev.stagger.EndReason;
import dev.stagger.RetryEvent;
import dev.stagger.RetryListener;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.http.HttpClient;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.http.client.ClientHttpRequestFactory;
import org.springframework.http.client.JdkClientHttpRequestFactory;
import org.springframework.http.client.SimpleClientHttpRequestFactory;
import org.springframework.web.client.ResourceAccessException;
import org.springframework.web.client.RestClient;
import org.springframework.web.client.RestTemplate;

/**
 * The retry's {@code attempt-timeout} ends each blocking attempt of a {@code RestClient} or
 * {@code RestTemplate} call, whatever the request factory: a server on loopback that answers its
 * first requests only after 5 s (or never, if the client gives up first) is abandoned after 500 ms,
 * the next attempt runs, and the call ends with the end reason the rules give. Real time here is
 * only the slow server's; the checks are on outcomes and reasons, not on timings.
 */
class AttemptTimeoutThroughSpringClientsTest {
    private static final long SLOW_MILLIS = 5_000;

    private HttpServer server;
    /** How many of the next requests are answered slowly. */
    private final AtomicInteger slow = new AtomicInteger();
    private final AtomicInteger requests = new AtomicInteger();
    /** Released when the test ends, so a slow handler does not outlive it. */
    private final CountDownLatch done = new CountDownLatch(1);
    private final List<EndReason> ends = new CopyOnWriteArrayList<>();

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(StaggerAutoConfiguration.class, StaggerHttpAutoConfiguration.class))
            .withBean(RetryCustomizer.class, () -> retry -> retry.withListener(new RetryListener() {
                @Override
                public void onCallFinished(RetryEvent.CallFinished event) {
                    ends.add(event.reason());
                }
            }))
            .withPropertyValues(
                    "stagger.retries.default.max-attempts=3",
                    "stagger.retries.default.attempt-timeout=500ms",
                    "stagger.retries.default.backoff.type=fixed",
                    "stagger.retries.default.backoff.base=10ms",
                    "stagger.retries.default.backoff.jitter=none",
                    "stagger.retries.default.budget=none");

    @BeforeEach
    void startSlowServer() throws IOException {
        server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        server.setExecutor(Executors.newCachedThreadPool());
        server.createContext("/", exchange -> {
            requests.incrementAndGet();
            try {
                if (slow.getAndDecrement() > 0) {
                    done.await(SLOW_MILLIS, TimeUnit.MILLISECONDS);
                }
                byte[] body = "in stock".getBytes(StandardCharsets.UTF_8);
                exchange.sendResponseHeaders(200, body.length);
                exchange.getResponseBody().write(body);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } catch (IOException clientGone) {
                // the client aborted the abandoned attempt
            } finally {
                exchange.close();
            }
        });
        server.start();
    }

    @AfterEach
    void stopServer() {
        done.countDown();
        server.stop(0);
    }

    private String base() {
        return "http://127.0.0.1:" + server.getAddress().getPort();
    }

    private static ClientHttpRequestFactory factory(String name) {
        return switch (name) {
            case "jdk" -> new JdkClientHttpRequestFactory(HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build());
            case "simple" -> new SimpleClientHttpRequestFactory();
            default -> throw new IllegalArgumentException(name);
        };
    }

    /**
     * One request through {@code factory} without Stagger, not counted: the first request of a
     * client loads its classes, which on a loaded machine can take longer than an attempt's timeout.
     */
    private void warmUp(String factory) {
        RestClient.builder().baseUrl(base()).requestFactory(factory(factory)).build().get().uri("/warm-up")
                .retrieve().body(String.class);
        requests.set(0);
    }

    private Function<StaggerHttp, String> restClient(String factory) {
        return http -> RestClient.builder().baseUrl(base()).requestFactory(factory(factory))
                .requestInterceptor(http.interceptor("inventory")).build().get().uri("/stock").retrieve().body(String.class);
    }

    private Function<StaggerHttp, String> restTemplate(String factory) {
        return http -> {
            RestTemplate template = new RestTemplate(factory(factory));
            template.getInterceptors().add(http.interceptor("inventory"));
            return template.getForObject(base() + "/stock", String.class);
        };
    }

    private Function<StaggerHttp, String> client(String kind) {
        String[] parts = kind.split(":");
        return parts[0].equals("rest-client") ? restClient(parts[1]) : restTemplate(parts[1]);
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"rest-client:jdk", "rest-client:simple", "rest-template:jdk", "rest-template:simple"})
    void aSlowAttemptIsAbandonedAtItsTimeoutAndTheNextOneRecovers(String kind) {
        warmUp(kind.split(":")[1]);
        slow.set(1);
        runner.run(context -> {
            String answer = client(kind).apply(context.getBean(StaggerHttp.class));

            assertThat(answer).isEqualTo("in stock");
            assertThat(requests).hasValue(2);
            assertThat(ends).containsExactly(EndReason.RECOVERED);
        });
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"rest-client:jdk", "rest-template:simple"})
    void attemptsThatAllRunPastTheirTimeoutEndTheCallExhaustedWithTheTimeoutAsCause(String kind) {
        warmUp(kind.split(":")[1]);
        slow.set(3);
        runner.run(context -> {
            Throwable thrown = catchThrowable(() -> client(kind).apply(context.getBean(StaggerHttp.class)));

            assertThat(thrown).isInstanceOf(ResourceAccessException.class).hasRootCauseInstanceOf(AttemptTimeoutException.class);
            assertThat(requests).hasValue(3);
            assertThat(ends).containsExactly(EndReason.EXHAUSTED);
        });
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"rest-client:jdk", "rest-client:simple"})
    void aSlowPostIsNotSentAgainAfterItsTimeout(String kind) {
        warmUp(kind.split(":")[1]);
        slow.set(1);
        runner.withPropertyValues("stagger.http.clients.inventory.idempotency-keys=off").run(context -> {
            StaggerHttp http = context.getBean(StaggerHttp.class);
            RestClient client = RestClient.builder().baseUrl(base()).requestFactory(factory(kind.split(":")[1]))
                    .requestInterceptor(http.interceptor("inventory")).build();

            Throwable thrown = catchThrowable(() -> client.post().uri("/orders").body("one").retrieve().body(String.class));

            assertThat(thrown).hasRootCauseInstanceOf(AttemptTimeoutException.class);
            assertThat(requests).hasValue(1); // it may have been processed: a POST without a key is sent once
            assertThat(ends).containsExactly(EndReason.NOT_RETRYABLE);
        });
    }
}
