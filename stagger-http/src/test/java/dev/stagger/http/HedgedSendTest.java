package dev.stagger.http;

import static dev.stagger.http.HttpTesting.JDK_CLIENT;
import static dev.stagger.http.HttpTesting.get;
import static dev.stagger.http.HttpTesting.method;
import static dev.stagger.http.HttpTesting.post;
import static dev.stagger.testsupport.http.FaultServer.status;
import static org.assertj.core.api.Assertions.assertThat;

import dev.stagger.Backoff;
import dev.stagger.HedgePolicy;
import dev.stagger.RetryEvent;
import dev.stagger.RetryListener;
import dev.stagger.RetryPolicy;
import dev.stagger.testing.VirtualClock;
import dev.stagger.testsupport.Await;
import dev.stagger.testsupport.http.FaultServer;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.Authenticator;
import java.net.CookieHandler;
import java.net.ProxySelector;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpHeaders;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Supplier;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLSession;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Hedged {@code send} and {@code sendAsync}: the hedge delay runs on a virtual clock, the HTTP on
 * a loopback Jetty server whose first answer is held until the test releases it (at most 10 s).
 * And hedged {@code execute} through another transport, its attempts answered by the test.
 */
class HedgedSendTest {
    private static final Duration DELAY = Duration.ofMillis(50);

    private FaultServer server;
    private final VirtualClock clock = new VirtualClock();
    private final CountDownLatch slow = new CountDownLatch(1);
    /** Lets the first attempt through another transport answer. */
    private final CountDownLatch foreignMayAnswer = new CountDownLatch(1);
    private static final URI FOREIGN_URI = URI.create("http://127.0.0.1:9/items/1");
    private final List<RetryEvent> events = new CopyOnWriteArrayList<>();
    private final List<RetryEvent.AttemptFinished> finished = new CopyOnWriteArrayList<>();

    @BeforeEach
    void start() throws Exception {
        server = new FaultServer();
    }

    @AfterEach
    void stop() throws Exception {
        slow.countDown();
        foreignMayAnswer.countDown();
        server.close();
    }

    private static RetryPolicy hedged() {
        return RetryPolicy.builder().maxAttempts(3).backoff(Backoff.fixed(Duration.ofMillis(100)))
                .hedge(HedgePolicy.after(DELAY)).build();
    }

    private RetryingHttpClient.Builder client(HttpClient http) {
        return RetryingHttpClient.builder(http).policy(hedged()).clock(clock).service("catalog")
                .listener(new RetryListener() {
                    @Override
                    public void onHedgeSent(RetryEvent.HedgeSent event) {
                        events.add(event);
                    }

                    @Override
                    public void onAttemptFinished(RetryEvent.AttemptFinished event) {
                        finished.add(event);
                    }

                    @Override
                    public void onAttemptCancelled(RetryEvent.AttemptCancelled event) {
                        events.add(event);
                    }
                });
    }

    /** Answers {@code status} once the test releases {@link #slow} (10 s at most). */
    private FaultServer.Step held(int status, String body) {
        return (request, response, callback) -> {
            slow.await(10, TimeUnit.SECONDS);
            status(status, body).answer(request, response, callback);
        };
    }

    @Test
    void sendsAHedgeAfterTheDelayAndTheFirstGoodAnswerWins() throws Exception {
        server.then(held(200, "slow")).otherwise(status(200, "fast"));
        CompletableFuture<HttpResponse<String>> future = client(JDK_CLIENT).build()
                .sendAsync(get(server.uri("/items/1")), HttpResponse.BodyHandlers.ofString());
        Await.until(() -> server.received().size() == 1);
        assertThat(clock.pendingTasks()).isEqualTo(1); // the hedge, armed, not sent before the delay
        assertThat(server.received()).hasSize(1);

        clock.advance(DELAY);
        HttpResponse<String> response = future.get(10, TimeUnit.SECONDS);

        assertThat(response.body()).isEqualTo("fast");
        assertThat(server.received()).extracting(FaultServer.Received::attemptHeader).containsExactly("1", "2");
        assertThat(events).hasSize(2);
        assertThat(events.get(0)).isInstanceOf(RetryEvent.HedgeSent.class);
        assertThat(events.get(1)).isInstanceOfSatisfying(RetryEvent.AttemptCancelled.class,
                cancelled -> assertThat(cancelled.attempt()).isEqualTo(1));
    }

    @Test
    void theFirstAttemptWinsWhenItAnswersBeforeTheDelay() throws Exception {
        server.otherwise(status(200, "quick"));
        HttpResponse<String> response = client(JDK_CLIENT).build()
                .sendAsync(get(server.uri("/items/1")), HttpResponse.BodyHandlers.ofString()).get(10, TimeUnit.SECONDS);
        assertThat(response.body()).isEqualTo("quick");
        assertThat(server.received()).hasSize(1);
        assertThat(events).isEmpty();
        assertThat(clock.pendingTasks()).isZero(); // the hedge timer was cancelled
    }

    @Test
    void aBadRequestFromAnyAttemptEndsTheCall() throws Exception {
        server.then(held(200, "slow"), status(400, "bad"));
        CompletableFuture<HttpResponse<String>> future = client(JDK_CLIENT).build()
                .sendAsync(get(server.uri("/items/1")), HttpResponse.BodyHandlers.ofString());
        Await.until(() -> server.received().size() == 1);
        clock.advance(DELAY);
        HttpResponse<String> response = future.get(10, TimeUnit.SECONDS);
        assertThat(response.statusCode()).isEqualTo(400);
        assertThat(server.received()).hasSize(2);
        assertThat(events).filteredOn(RetryEvent.AttemptCancelled.class::isInstance).hasSize(1);
    }

    @Test
    void neverHedgesAPostWhoseKeyTheServerIsNotDeclaredToHonour() throws Exception {
        server.then(held(200, "created"));
        CompletableFuture<HttpResponse<String>> future = client(JDK_CLIENT).build()
                .sendAsync(post(server.uri("/orders"), "{}"), HttpResponse.BodyHandlers.ofString());
        Await.until(() -> server.received().size() == 1);
        assertThat(clock.pendingTasks()).isZero(); // no hedge armed
        clock.advance(DELAY.multipliedBy(10));
        slow.countDown();
        assertThat(future.get(10, TimeUnit.SECONDS).body()).isEqualTo("created");
        assertThat(server.received()).hasSize(1);
        assertThat(events).isEmpty();
    }

    @Test
    void neverHedgesAPostWithoutAKey() throws Exception {
        server.then(held(200, "created"));
        CompletableFuture<HttpResponse<String>> future = client(JDK_CLIENT).idempotencyKeys(IdempotencyKeyMode.OFF)
                .keysHonoured(uri -> true).build()
                .sendAsync(post(server.uri("/orders"), "{}"), HttpResponse.BodyHandlers.ofString());
        Await.until(() -> server.received().size() == 1);
        assertThat(clock.pendingTasks()).isZero();
        slow.countDown();
        assertThat(future.get(10, TimeUnit.SECONDS).body()).isEqualTo("created");
        assertThat(server.received()).hasSize(1);
        assertThat(server.received().get(0).idempotencyKey()).isNull();
    }

    @Test
    void hedgesAKeyedPostToAServerThatHonoursKeysWithTheSameKey() throws Exception {
        server.then(held(200, "slow")).otherwise(status(201, "created"));
        CompletableFuture<HttpResponse<String>> future = client(JDK_CLIENT).keysHonoured(uri -> true).build()
                .sendAsync(post(server.uri("/orders"), "{}"), HttpResponse.BodyHandlers.ofString());
        Await.until(() -> server.received().size() == 1);
        clock.advance(DELAY);
        assertThat(future.get(10, TimeUnit.SECONDS).statusCode()).isEqualTo(201);
        assertThat(server.received()).hasSize(2).extracting(FaultServer.Received::idempotencyKey)
                .doesNotContainNull().containsOnly(server.received().get(0).idempotencyKey());
    }

    @Test
    void hedgesPutOnlyWhenIdempotentWritesMayHedge() throws Exception {
        server.then(held(200, "slow")).otherwise(status(200, "fast"));
        CompletableFuture<HttpResponse<String>> unhedged = client(JDK_CLIENT).build()
                .sendAsync(method("PUT", server.uri("/items/1")), HttpResponse.BodyHandlers.ofString());
        Await.until(() -> server.received().size() == 1);
        assertThat(clock.pendingTasks()).isZero();
        slow.countDown();
        assertThat(unhedged.get(10, TimeUnit.SECONDS).body()).isEqualTo("slow");

        CountDownLatch second = new CountDownLatch(1);
        server.then((request, response, callback) -> {
            second.await(10, TimeUnit.SECONDS);
            status(200, "slow").answer(request, response, callback);
        });
        try {
            CompletableFuture<HttpResponse<String>> hedgedPut = client(JDK_CLIENT).hedgeIdempotentWrites(true).build()
                    .sendAsync(method("PUT", server.uri("/items/1")), HttpResponse.BodyHandlers.ofString());
            Await.until(() -> server.received().size() == 2);
            clock.advance(DELAY);
            assertThat(hedgedPut.get(10, TimeUnit.SECONDS).body()).isEqualTo("fast");
            assertThat(server.received()).hasSize(3);
        } finally {
            second.countDown();
        }
    }

    @Test
    void hedgesASyncSendAndReleasesTheBodyOfALoserThatAnswersLate() throws Exception {
        TrackedBody loserBody = new TrackedBody("late");
        CountDownLatch loserMayAnswer = new CountDownLatch(1);
        FakeClient http = new FakeClient();
        http.answers.add(() -> {
            awaitQuietly(loserMayAnswer); // ignores the interrupt, as a blocked read may
            return response(200, loserBody);
        });
        http.answers.add(() -> response(200, new TrackedBody("winner")));
        RetryingHttpClient client = client(http).build();

        CompletableFuture<HttpResponse<InputStream>> call = CompletableFuture.supplyAsync(() -> {
            try {
                return client.send(get(URI.create("http://127.0.0.1:9/items/1")), HttpResponse.BodyHandlers.ofInputStream());
            } catch (IOException | InterruptedException e) {
                throw new IllegalStateException(e);
            }
        }, task -> new Thread(task, "caller").start());
        Await.until(() -> http.sent.get() && clock.pendingTasks() == 1);
        clock.advance(DELAY);
        Await.until(() -> finished.size() == 1); // the hedge answered first
        // the first attempt runs on the caller's thread and ignores the interrupt the winning hedge
        // sends it: the caller answers with the hedge's response once that attempt returns
        loserMayAnswer.countDown();
        HttpResponse<InputStream> response = call.get(10, TimeUnit.SECONDS);
        try (InputStream body = response.body()) {
            assertThat(new String(body.readAllBytes(), StandardCharsets.UTF_8)).isEqualTo("winner");
        }
        Await.until(() -> loserBody.closed);
    }

    @Test
    void releasesTheBodyOfARetriedAnswerThatTheWinnerOutlived() throws Exception {
        CountDownLatch firstMayAnswer = new CountDownLatch(1);
        TrackedBody unavailable = new TrackedBody("down");
        FakeClient http = new FakeClient();
        http.answers.add(() -> {
            awaitQuietly(firstMayAnswer);
            return response(200, new TrackedBody("first"));
        });
        http.answers.add(() -> response(503, unavailable));
        CompletableFuture<HttpResponse<InputStream>> call = client(http).build()
                .sendAsync(get(URI.create("http://127.0.0.1:9/items/1")), HttpResponse.BodyHandlers.ofInputStream());
        Await.until(() -> http.sent.get() && clock.pendingTasks() == 1);
        clock.advance(DELAY);
        Await.until(() -> finished.size() == 1); // the 503, while the first attempt still runs
        assertThat(finished.get(0).result()).isNotNull();
        firstMayAnswer.countDown();
        HttpResponse<InputStream> response = call.get(10, TimeUnit.SECONDS);
        assertThat(response.statusCode()).isEqualTo(200);
        response.body().close();
        Await.until(() -> unavailable.closed);
    }

    /** A response of the other stack: a status and whether its body was released. */
    record Answer(int status, String body, AtomicBoolean released) {
        Answer(int status, String body) {
            this(status, body, new AtomicBoolean());
        }
    }

    /** The other stack's rules; {@code owns} as the transport's contract asks. */
    static final HttpTransport<Answer> TRANSPORT = new HttpTransport<>() {
        @Override
        public int statusCode(Answer response) {
            return response.status();
        }

        @Override
        public Optional<String> header(Answer response, String name) {
            return Optional.empty();
        }

        @Override
        public void discard(Answer response) {
            response.released().set(true);
        }

        @Override
        public boolean owns(Object response) {
            return response instanceof Answer;
        }

        @Override
        public boolean concurrentAttempts() {
            return true;
        }
    };

    private RetryingHttpClient foreignClient() {
        return RetryingHttpClient.builder().service("catalog").clock(clock).withoutBudget()
                .policy(RetryPolicy.builder().maxAttempts(3).backoff(Backoff.fixed(Duration.ofMillis(100)))
                        .hedge(HedgePolicy.after(DELAY)).build())
                .build();
    }

    @Test
    void executeHedgesASafeRequestAndALateLoserIsReleasedByTheTransportOwningIt() throws Exception {
        RetryingHttpClient client = foreignClient();
        Answer late = new Answer(200, "slow");
        AtomicInteger sent = new AtomicInteger();
        CompletableFuture<Answer> call = CompletableFuture.supplyAsync(() -> {
            try {
                return client.execute(client.exchange("GET", FOREIGN_URI, name -> Optional.empty()), TRANSPORT, attempt -> {
                    if (sent.incrementAndGet() == 1) {
                        awaitQuietly(foreignMayAnswer); // a blocked read that ignores the interrupt
                        return late;
                    }
                    return new Answer(200, "fast");
                });
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        }, task -> new Thread(task, "caller").start());
        Await.until(() -> sent.get() == 1 && clock.pendingTasks() == 1);

        clock.advance(DELAY);
        Await.until(() -> sent.get() == 2);
        // the first attempt runs on the caller's thread and ignores the interrupt the winner sends
        foreignMayAnswer.countDown();

        assertThat(call.get(10, TimeUnit.SECONDS).body()).isEqualTo("fast");
        assertThat(sent).hasValue(2);
        Await.until(() -> late.released().get());
    }

    /**
     * A transport whose attempts share the call's state (an OkHttp chain, an Apache exec chain)
     * does not declare concurrent attempts: a hedging policy's attempts through it run one after
     * another, no hedge armed.
     */
    @Test
    void executeThroughATransportWithoutConcurrentAttemptsIsNotHedged() throws Exception {
        HttpTransport<Answer> sequential = new HttpTransport<>() {
            @Override
            public int statusCode(Answer response) {
                return response.status();
            }

            @Override
            public Optional<String> header(Answer response, String name) {
                return Optional.empty();
            }

            @Override
            public void discard(Answer response) {
                response.released().set(true);
            }
        };
        RetryingHttpClient client = foreignClient();
        AtomicInteger sent = new AtomicInteger();
        CompletableFuture<Answer> call = CompletableFuture.supplyAsync(() -> {
            try {
                return client.execute(client.exchange("GET", FOREIGN_URI, name -> Optional.empty()), sequential, attempt -> {
                    sent.incrementAndGet();
                    awaitQuietly(foreignMayAnswer);
                    return new Answer(200, "only");
                });
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        }, task -> new Thread(task, "caller").start());
        Await.until(() -> sent.get() == 1);
        assertThat(clock.pendingTasks()).as("no hedge armed").isZero();

        foreignMayAnswer.countDown();

        assertThat(call.get(10, TimeUnit.SECONDS).body()).isEqualTo("only");
        assertThat(sent).hasValue(1);
    }

    @Test
    void anUnkeyedPostThroughAnotherTransportIsNeverHedged() throws Exception {
        RetryingHttpClient client = foreignClient().toBuilder().idempotencyKeys(IdempotencyKeyMode.OFF).keysHonoured(uri -> true)
                .build();
        AtomicInteger sent = new AtomicInteger();
        CompletableFuture<Answer> call = CompletableFuture.supplyAsync(() -> {
            try {
                return client.execute(client.exchange("POST", FOREIGN_URI, name -> Optional.empty()), TRANSPORT, attempt -> {
                    sent.incrementAndGet();
                    awaitQuietly(foreignMayAnswer);
                    return new Answer(201, "created");
                });
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        }, task -> new Thread(task, "caller").start());
        Await.until(() -> sent.get() == 1);
        assertThat(clock.pendingTasks()).as("no hedge armed").isZero();

        foreignMayAnswer.countDown();

        assertThat(call.get(10, TimeUnit.SECONDS).body()).isEqualTo("created");
        assertThat(sent).hasValue(1);
    }

    /**
     * Waits, at most 10 s, for {@code latch} on a thread that has been interrupted: a blocked read
     * that ignores the interrupt. Not {@code Await}, which ends a wait when interrupted.
     */
    private static void awaitQuietly(CountDownLatch latch) {
        long giveUp = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (latch.getCount() > 0 && System.nanoTime() < giveUp) {
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1));
        }
    }

    /** A body that remembers being closed. */
    private static final class TrackedBody extends ByteArrayInputStream {
        volatile boolean closed;

        TrackedBody(String text) {
            super(text.getBytes(StandardCharsets.UTF_8));
        }

        @Override
        public void close() throws IOException {
            closed = true;
            super.close();
        }
    }

    private static HttpResponse<InputStream> response(int status, InputStream body) {
        return new HttpResponse<>() {
            @Override
            public int statusCode() {
                return status;
            }

            @Override
            public HttpRequest request() {
                return get(URI.create("http://127.0.0.1:9/items/1"));
            }

            @Override
            public Optional<HttpResponse<InputStream>> previousResponse() {
                return Optional.empty();
            }

            @Override
            public HttpHeaders headers() {
                return HttpHeaders.of(Map.of(), (name, value) -> true);
            }

            @Override
            public InputStream body() {
                return body;
            }

            @Override
            public Optional<SSLSession> sslSession() {
                return Optional.empty();
            }

            @Override
            public URI uri() {
                return URI.create("http://127.0.0.1:9/items/1");
            }

            @Override
            public HttpClient.Version version() {
                return HttpClient.Version.HTTP_1_1;
            }
        };
    }

    /** An HttpClient that answers each request from a queue, on its own thread for sendAsync. */
    private static final class FakeClient extends HttpClient {
        final ConcurrentLinkedQueue<Supplier<HttpResponse<InputStream>>> answers = new ConcurrentLinkedQueue<>();
        final AtomicBoolean sent = new AtomicBoolean();

        @Override
        @SuppressWarnings("unchecked") // the tests ask for InputStream bodies only
        public <T> HttpResponse<T> send(HttpRequest request, HttpResponse.BodyHandler<T> handler) {
            Supplier<HttpResponse<InputStream>> next = answers.poll();
            sent.set(true);
            return (HttpResponse<T>) next.get();
        }

        @Override
        public <T> CompletableFuture<HttpResponse<T>> sendAsync(HttpRequest request, HttpResponse.BodyHandler<T> handler) {
            Supplier<HttpResponse<InputStream>> next = answers.poll();
            sent.set(true);
            @SuppressWarnings("unchecked") // the tests ask for InputStream bodies only
            Supplier<HttpResponse<T>> typed = (Supplier<HttpResponse<T>>) (Supplier<?>) next;
            // a thread per answer: a held answer must not queue the next behind it (the common pool may have one thread)
            return CompletableFuture.supplyAsync(typed, task -> new Thread(task, "fake-http").start());
        }

        @Override
        public <T> CompletableFuture<HttpResponse<T>> sendAsync(HttpRequest request, HttpResponse.BodyHandler<T> handler,
                                                                HttpResponse.PushPromiseHandler<T> push) {
            return sendAsync(request, handler);
        }

        @Override
        public Optional<CookieHandler> cookieHandler() {
            return Optional.empty();
        }

        @Override
        public Optional<Duration> connectTimeout() {
            return Optional.empty();
        }

        @Override
        public Redirect followRedirects() {
            return Redirect.NEVER;
        }

        @Override
        public Optional<ProxySelector> proxy() {
            return Optional.empty();
        }

        @Override
        public SSLContext sslContext() {
            return JDK_CLIENT.sslContext();
        }

        @Override
        public SSLParameters sslParameters() {
            return JDK_CLIENT.sslParameters();
        }

        @Override
        public Optional<Authenticator> authenticator() {
            return Optional.empty();
        }

        @Override
        public Version version() {
            return Version.HTTP_1_1;
        }

        @Override
        public Optional<Executor> executor() {
            return Optional.empty();
        }
    }
}
