package dev.stagger.spring;

import static org.assertj.core.api.Assertions.assertThat;

import dev.stagger.testing.VirtualClock;
import dev.stagger.testsupport.Await;
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
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.catalina.Context;
import org.apache.catalina.startup.Tomcat;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.http.client.ClientHttpRequestInterceptor;
import org.springframework.http.client.ClientHttpResponse;
import org.springframework.http.client.JdkClientHttpRequestFactory;
import org.springframework.http.client.reactive.JdkClientHttpConnector;
import org.springframework.web.client.RestClient;
import org.springframework.web.client.RestTemplate;
import org.springframework.web.reactive.function.client.WebClient;

/**
 * RestClient, RestTemplate and WebClient hedge through Stagger's interceptor and filter: a loopback
 * Tomcat holds the first request to {@code /slow} (10 s at most, or until the test lets it answer)
 * and answers every other at once; the hedge delay runs on a virtual clock. An interceptor inside
 * Stagger's counts the closes of each attempt's response: the loser's, answering late, is closed.
 */
class HedgedSpringHttpClientsTest {
    private static final Duration DELAY = Duration.ofMillis(50);

    private Tomcat tomcat;
    private Path baseDir;
    private final CountDownLatch slowMayAnswer = new CountDownLatch(1);
    private final AtomicBoolean heldOne = new AtomicBoolean();
    /** The held answer was written, or its connection dropped by the client: the server is not stuck on it. */
    private final CountDownLatch slowEnded = new CountDownLatch(1);
    private final List<Received> received = new CopyOnWriteArrayList<>();

    /** Attempts' responses handed back, and those closed: a RestClient attempt closed is its connection released. */
    private final AtomicInteger answered = new AtomicInteger();
    private final AtomicInteger closed = new AtomicInteger();
    /** Runs inside the Stagger interceptor, once per attempt: counts the closes of each attempt's response. */
    private final ClientHttpRequestInterceptor closes = (request, body, execution) -> {
        ClientHttpResponse response = execution.execute(request, body);
        answered.incrementAndGet();
        return new ClientHttpResponse() {
            @Override
            public org.springframework.http.HttpStatusCode getStatusCode() throws IOException {
                return response.getStatusCode();
            }

            @Override
            public String getStatusText() throws IOException {
                return response.getStatusText();
            }

            @Override
            public org.springframework.http.HttpHeaders getHeaders() {
                return response.getHeaders();
            }

            @Override
            public java.io.InputStream getBody() throws IOException {
                return response.getBody();
            }

            @Override
            public void close() {
                closed.incrementAndGet();
                response.close();
            }
        };
    };

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
                try {
                    response.setStatus(200);
                    // a body longer than a socket buffer's worth is not read by accident
                    response.getOutputStream().write((slow ? "slow" : "fast").repeat(slow ? 50_000 : 1)
                            .getBytes(StandardCharsets.UTF_8));
                } finally {
                    if (slow) {
                        slowEnded.countDown();
                    }
                }
            }
        });
        context.addServletMappingDecoded("/*", "answers");
        tomcat.start();

    }

    @AfterEach
    void stop() throws Exception {
        slowMayAnswer.countDown();
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
        return RestClient.builder().baseUrl(base()).requestInterceptor(http.interceptor("catalog")).requestInterceptor(closes)
                .build();
    }

    private WebClient webClient(StaggerWebClient webClients) {
        return WebClient.builder().baseUrl(base()).clientConnector(new JdkClientHttpConnector())
                .filter(webClients.filter("catalog")).build();
    }

    /**
     * Lets the held first answer go: the server ends it (the client read it or dropped its
     * connection), and every attempt's response that reached the caller's stack was closed (a JDK
     * client aborts the interrupted loser's exchange; another answers it late and Stagger closes it).
     */
    private void loserAnswersAndIsReleased() throws InterruptedException {
        slowMayAnswer.countDown();
        assertThat(slowEnded.await(10, TimeUnit.SECONDS)).as("the server finished the loser's answer").isTrue();
        Await.until(() -> answered.get() >= 1 && closed.get() == answered.get());
    }

    @Test
    void restClientSendsAHedgeAfterTheDelayAndReleasesTheLoser() {
        runner.run(context -> {
            VirtualClock clock = context.getBean(VirtualClock.class);
            CompletableFuture<String> body = CompletableFuture.supplyAsync(
                    () -> restClient(context.getBean(StaggerHttp.class)).get().uri("/slow/items/1").retrieve().body(String.class));
            Await.until(() -> received.size() == 1 && clock.pendingTasks() == 1);

            clock.advance(DELAY);

            assertThat(body.get(10, TimeUnit.SECONDS)).isEqualTo("fast");
            assertThat(received).extracting(Received::attempt).containsExactly("1", "2");
            loserAnswersAndIsReleased();
        });
    }

    @Test
    void restTemplateSendsAHedgeAfterTheDelayAndReleasesTheLoser() {
        runner.run(context -> {
            VirtualClock clock = context.getBean(VirtualClock.class);
            // the JDK's factory: a hedge that wins ends the caller's own first attempt by interrupting it, which
            // HttpURLConnection's blocking read (RestTemplate's default) ignores until the server answers
            RestTemplate template = new RestTemplate(new JdkClientHttpRequestFactory());
            template.getInterceptors().add(context.getBean(StaggerHttp.class).interceptor("catalog"));
            template.getInterceptors().add(closes);
            CompletableFuture<String> body = CompletableFuture.supplyAsync(
                    () -> template.getForObject(base() + "/slow/items/1", String.class));
            Await.until(() -> received.size() == 1 && clock.pendingTasks() == 1);

            clock.advance(DELAY);

            assertThat(body.get(10, TimeUnit.SECONDS)).isEqualTo("fast");
            assertThat(received).hasSize(2);
            loserAnswersAndIsReleased();
        });
    }

    @Test
    void webClientSendsAHedgeAfterTheDelayAndCancelsTheLoser() {
        runner.run(context -> {
            VirtualClock clock = context.getBean(VirtualClock.class);
            CompletableFuture<String> body = webClient(context.getBean(StaggerWebClient.class)).get().uri("/slow/items/1")
                    .retrieve().bodyToMono(String.class).toFuture();
            Await.until(() -> received.size() == 1 && clock.pendingTasks() == 1);

            clock.advance(DELAY);

            assertThat(body.get(10, TimeUnit.SECONDS)).isEqualTo("fast");
            assertThat(received).extracting(Received::attempt).containsExactly("1", "2");
        });
    }

    @Test
    void aKeyedPostToAServerHonouringKeysIsHedgedWithTheSameKey() {
        runner.withPropertyValues("stagger.http.clients.catalog.keys-honoured=true").run(context -> {
            VirtualClock clock = context.getBean(VirtualClock.class);
            CompletableFuture<String> body = CompletableFuture.supplyAsync(() -> restClient(context.getBean(StaggerHttp.class))
                    .post().uri("/slow/orders").body("{}").retrieve().body(String.class));
            Await.until(() -> received.size() == 1 && clock.pendingTasks() == 1);

            clock.advance(DELAY);

            assertThat(body.get(10, TimeUnit.SECONDS)).isEqualTo("fast");
            assertThat(received).hasSize(2).extracting(Received::idempotencyKey)
                    .doesNotContainNull().containsOnly(received.get(0).idempotencyKey());
            loserAnswersAndIsReleased();
        });
    }

    @Test
    void aKeyedPostToAServerNotDeclaredToHonourKeysIsNeverHedged() {
        runner.run(context -> {
            VirtualClock clock = context.getBean(VirtualClock.class);
            CompletableFuture<String> body = webClient(context.getBean(StaggerWebClient.class)).post().uri("/slow/orders")
                    .bodyValue("{}").retrieve().bodyToMono(String.class).toFuture();
            Await.until(() -> received.size() == 1);
            assertThat(clock.pendingTasks()).as("no hedge armed").isZero();

            slowMayAnswer.countDown();

            assertThat(body.get(10, TimeUnit.SECONDS)).startsWith("slow");
            assertThat(received).singleElement().satisfies(r -> assertThat(r.idempotencyKey()).isNotNull());
        });
    }

    @Test
    void aPutIsNotHedgedByDefault() {
        runner.run(context -> {
            VirtualClock clock = context.getBean(VirtualClock.class);
            CompletableFuture<String> body = CompletableFuture.supplyAsync(() -> restClient(context.getBean(StaggerHttp.class))
                    .put().uri("/slow/items/1").body("{}").retrieve().body(String.class));
            Await.until(() -> received.size() == 1);
            assertThat(clock.pendingTasks()).as("no hedge armed for a PUT by default").isZero();

            slowMayAnswer.countDown();

            assertThat(body.get(10, TimeUnit.SECONDS)).startsWith("slow");
            assertThat(received).singleElement().extracting(Received::method).isEqualTo("PUT");
        });
    }

    @Test
    void aPutIsHedgedWhenTheClientSaysItsWritesMayRace() {
        runner.withPropertyValues("stagger.http.clients.catalog.hedge-idempotent-writes=true").run(context -> {
            VirtualClock clock = context.getBean(VirtualClock.class);
            CompletableFuture<String> body = CompletableFuture.supplyAsync(() -> restClient(context.getBean(StaggerHttp.class))
                    .put().uri("/slow/items/1").body("{}").retrieve().body(String.class));
            Await.until(() -> received.size() == 1 && clock.pendingTasks() == 1);

            clock.advance(DELAY);

            assertThat(body.get(10, TimeUnit.SECONDS)).isEqualTo("fast");
            assertThat(received).extracting(Received::method).containsExactly("PUT", "PUT");
            loserAnswersAndIsReleased();
        });
    }

    @Test
    void anUnkeyedPostIsNeverHedged() {
        runner.withPropertyValues("stagger.http.clients.catalog.keys-honoured=true",
                "stagger.http.clients.catalog.idempotency-keys=off").run(context -> {
            VirtualClock clock = context.getBean(VirtualClock.class);
            CompletableFuture<String> body = CompletableFuture.supplyAsync(() -> restClient(context.getBean(StaggerHttp.class))
                    .post().uri("/slow/orders").body("{}").retrieve().body(String.class));
            Await.until(() -> received.size() == 1);
            assertThat(clock.pendingTasks()).as("no hedge armed").isZero();

            slowMayAnswer.countDown();

            assertThat(body.get(10, TimeUnit.SECONDS)).startsWith("slow");
            assertThat(received).singleElement().satisfies(r -> assertThat(r.idempotencyKey()).isNull());
        });
    }
}
