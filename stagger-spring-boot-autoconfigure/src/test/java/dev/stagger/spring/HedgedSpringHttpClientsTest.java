package dev.stagger.spring;

import static dev.stagger.spring.Eventually.awaitTrue;
import static org.assertj.core.api.Assertions.assertThat;

import dev.stagger.testing.VirtualClock;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BooleanSupplier;
import org.apache.catalina.Context;
import org.apache.catalina.startup.Tomcat;
import org.apache.hc.client5.http.impl.async.CloseableHttpAsyncClient;
import org.apache.hc.client5.http.impl.async.HttpAsyncClients;
import org.apache.hc.client5.http.impl.classic.CloseableHttpClient;
import org.apache.hc.client5.http.impl.io.PoolingHttpClientConnectionManager;
import org.apache.hc.client5.http.impl.io.PoolingHttpClientConnectionManagerBuilder;
import org.apache.hc.client5.http.impl.nio.PoolingAsyncClientConnectionManager;
import org.apache.hc.client5.http.impl.nio.PoolingAsyncClientConnectionManagerBuilder;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.http.client.HttpComponentsClientHttpRequestFactory;
import org.springframework.http.client.reactive.HttpComponentsClientHttpConnector;
import org.springframework.web.client.RestClient;
import org.springframework.web.client.RestTemplate;
import org.springframework.web.reactive.function.client.WebClient;

/**
 * RestClient, RestTemplate and WebClient hedge through Stagger's interceptor and filter: a loopback
 * Tomcat holds the first request to {@code /slow} (10 s at most, or until the test lets it answer)
 * and answers every other at once; the hedge delay runs on a virtual clock. The clients pool their
 * connections (Apache HttpClient 5), so a loser whose body was not released shows as a connection
 * still leased.
 */
class HedgedSpringHttpClientsTest {
    private static final Duration DELAY = Duration.ofMillis(50);

    private Tomcat tomcat;
    private Path baseDir;
    private final CountDownLatch slowMayAnswer = new CountDownLatch(1);
    private final AtomicBoolean heldOne = new AtomicBoolean();
    private final List<Received> received = new CopyOnWriteArrayList<>();

    private PoolingHttpClientConnectionManager pool;
    private CloseableHttpClient blocking;
    private PoolingAsyncClientConnectionManager asyncPool;
    private CloseableHttpAsyncClient async;

    /** One request as the server saw it. */
    record Received(String method, String idempotencyKey, String attempt) {
    }

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(StaggerAutoConfiguration.class, StaggerHttpAutoConfiguration.class))
            .withBean(VirtualClock.class, VirtualClock::new)
            .withPropertyValues(
                    "stagger.hedges.catalog.delay=50ms",
                    "stagger.retries.catalog.max-attempts=3",
                    "stagger.retries.catalog.budget=none");

    @BeforeEach
    void start() throws Exception {
        baseDir = Files.createTempDirectory("stagger-hedge-tomcat");
        tomcat = new Tomcat();
        tomcat.setBaseDir(baseDir.toString());
        tomcat.setPort(0);
        tomcat.getConnector();
        Context context = tomcat.addContext("", null);
        Tomcat.addServlet(context, "answers", new HttpServlet() {
            @Override
            protected void service(HttpServletRequest request, HttpServletResponse response) throws IOException {
                received.add(new Received(request.getMethod(), request.getHeader("Idempotency-Key"),
                        request.getHeader("Stagger-Attempt")));
                boolean slow = request.getRequestURI().startsWith("/slow") && heldOne.compareAndSet(false, true);
                if (slow) {
                    try {
                        slowMayAnswer.await(10, TimeUnit.SECONDS);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                }
                response.setStatus(200);
                // a body longer than a socket buffer's worth is not read by accident
                response.getOutputStream().write((slow ? "slow" : "fast").repeat(slow ? 50_000 : 1).getBytes(StandardCharsets.UTF_8));
            }
        });
        context.addServletMappingDecoded("/*", "answers");
        tomcat.start();

        pool = PoolingHttpClientConnectionManagerBuilder.create().build();
        blocking = org.apache.hc.client5.http.impl.classic.HttpClients.custom().setConnectionManager(pool).build();
        asyncPool = PoolingAsyncClientConnectionManagerBuilder.create().build();
        async = HttpAsyncClients.custom().setConnectionManager(asyncPool).build();
        async.start();
    }

    @AfterEach
    void stop() throws Exception {
        slowMayAnswer.countDown();
        blocking.close();
        async.close();
        tomcat.stop();
        tomcat.destroy();
        try (var files = Files.walk(baseDir)) {
            files.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        }
    }

    private String base() {
        return "http://127.0.0.1:" + tomcat.getConnector().getLocalPort();
    }

    private RestClient restClient(StaggerHttp http) {
        return RestClient.builder().baseUrl(base()).requestFactory(new HttpComponentsClientHttpRequestFactory(blocking))
                .requestInterceptor(http.interceptor("catalog")).build();
    }

    private WebClient webClient(StaggerWebClient webClients) {
        return WebClient.builder().baseUrl(base()).clientConnector(new HttpComponentsClientHttpConnector(async))
                .filter(webClients.filter("catalog")).build();
    }

    /** Lets the held first answer go and waits until every connection is back in the pool. */
    private void loserAnswersAndIsReleased(BooleanSupplier nothingLeased) {
        slowMayAnswer.countDown();
        awaitTrue(nothingLeased);
    }

    @Test
    void restClientSendsAHedgeAfterTheDelayAndReleasesTheLoser() {
        runner.run(context -> {
            VirtualClock clock = context.getBean(VirtualClock.class);
            CompletableFuture<String> body = CompletableFuture.supplyAsync(
                    () -> restClient(context.getBean(StaggerHttp.class)).get().uri("/slow/items/1").retrieve().body(String.class));
            awaitTrue(() -> received.size() == 1 && clock.pendingTasks() == 1);

            clock.advance(DELAY);

            assertThat(body.get(10, TimeUnit.SECONDS)).isEqualTo("fast");
            assertThat(received).extracting(Received::attempt).containsExactly("1", "2");
            loserAnswersAndIsReleased(() -> pool.getTotalStats().getLeased() == 0);
        });
    }

    @Test
    void restTemplateSendsAHedgeAfterTheDelayAndReleasesTheLoser() {
        runner.run(context -> {
            VirtualClock clock = context.getBean(VirtualClock.class);
            RestTemplate template = new RestTemplate(new HttpComponentsClientHttpRequestFactory(blocking));
            template.getInterceptors().add(context.getBean(StaggerHttp.class).interceptor("catalog"));
            CompletableFuture<String> body = CompletableFuture.supplyAsync(
                    () -> template.getForObject(base() + "/slow/items/1", String.class));
            awaitTrue(() -> received.size() == 1 && clock.pendingTasks() == 1);

            clock.advance(DELAY);

            assertThat(body.get(10, TimeUnit.SECONDS)).isEqualTo("fast");
            assertThat(received).hasSize(2);
            loserAnswersAndIsReleased(() -> pool.getTotalStats().getLeased() == 0);
        });
    }

    @Test
    void webClientSendsAHedgeAfterTheDelayAndCancelsTheLoser() {
        runner.run(context -> {
            VirtualClock clock = context.getBean(VirtualClock.class);
            CompletableFuture<String> body = webClient(context.getBean(StaggerWebClient.class)).get().uri("/slow/items/1")
                    .retrieve().bodyToMono(String.class).toFuture();
            awaitTrue(() -> received.size() == 1 && clock.pendingTasks() == 1);

            clock.advance(DELAY);

            assertThat(body.get(10, TimeUnit.SECONDS)).isEqualTo("fast");
            assertThat(received).extracting(Received::attempt).containsExactly("1", "2");
            loserAnswersAndIsReleased(() -> asyncPool.getTotalStats().getLeased() == 0);
        });
    }

    @Test
    void aKeyedPostToAServerHonouringKeysIsHedgedWithTheSameKey() {
        runner.withPropertyValues("stagger.http.clients.catalog.keys-honoured=true").run(context -> {
            VirtualClock clock = context.getBean(VirtualClock.class);
            CompletableFuture<String> body = CompletableFuture.supplyAsync(() -> restClient(context.getBean(StaggerHttp.class))
                    .post().uri("/slow/orders").body("{}").retrieve().body(String.class));
            awaitTrue(() -> received.size() == 1 && clock.pendingTasks() == 1);

            clock.advance(DELAY);

            assertThat(body.get(10, TimeUnit.SECONDS)).isEqualTo("fast");
            assertThat(received).hasSize(2).extracting(Received::idempotencyKey)
                    .doesNotContainNull().containsOnly(received.get(0).idempotencyKey());
            loserAnswersAndIsReleased(() -> pool.getTotalStats().getLeased() == 0);
        });
    }

    @Test
    void aKeyedPostToAServerNotDeclaredToHonourKeysIsNeverHedged() {
        runner.run(context -> {
            VirtualClock clock = context.getBean(VirtualClock.class);
            CompletableFuture<String> body = webClient(context.getBean(StaggerWebClient.class)).post().uri("/slow/orders")
                    .bodyValue("{}").retrieve().bodyToMono(String.class).toFuture();
            awaitTrue(() -> received.size() == 1);
            assertThat(clock.pendingTasks()).as("no hedge armed").isZero();

            slowMayAnswer.countDown();

            assertThat(body.get(10, TimeUnit.SECONDS)).startsWith("slow");
            assertThat(received).singleElement().satisfies(r -> assertThat(r.idempotencyKey()).isNotNull());
        });
    }

    @Test
    void anUnkeyedPostIsNeverHedged() {
        runner.withPropertyValues("stagger.http.clients.catalog.keys-honoured=true",
                "stagger.http.clients.catalog.idempotency-keys=off").run(context -> {
            VirtualClock clock = context.getBean(VirtualClock.class);
            CompletableFuture<String> body = CompletableFuture.supplyAsync(() -> restClient(context.getBean(StaggerHttp.class))
                    .post().uri("/slow/orders").body("{}").retrieve().body(String.class));
            awaitTrue(() -> received.size() == 1);
            assertThat(clock.pendingTasks()).as("no hedge armed").isZero();

            slowMayAnswer.countDown();

            assertThat(body.get(10, TimeUnit.SECONDS)).startsWith("slow");
            assertThat(received).singleElement().satisfies(r -> assertThat(r.idempotencyKey()).isNull());
        });
    }
}
