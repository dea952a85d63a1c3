package dev.stagger.shedding;

import static org.assertj.core.api.Assertions.assertThat;

import dev.stagger.shedding.overload.LoopbackServer;
import dev.stagger.shedding.support.Gate;
import dev.stagger.testing.VirtualClock;
import dev.stagger.testsupport.Await;
import jakarta.servlet.AsyncContext;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The filter in a real Jetty on loopback, with requests held in the handler to fill the limit. */
class LoadSheddingFilterTest {
    private static final HttpClient CLIENT = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

    private final Gate release = new Gate();
    private LoopbackServer server;

    @AfterEach
    void stop() throws Exception {
        release.open();
        if (server != null) {
            server.close();
        }
    }

    /** A server whose /hold requests wait at the gate {@link #release}; other paths answer at once. */
    private LoadSheddingFilter start(LoadSheddingFilter filter) throws Exception {
        server = LoopbackServer.start((request, response) -> {
            if (request.getRequestURI().startsWith("/hold")) {
                release.pass();
            }
            response.setStatus(200);
            response.getWriter().write("done");
        }, filter);
        return filter;
    }

    private CompletableFuture<HttpResponse<String>> hold(String... headers) {
        return CLIENT.sendAsync(get("/hold", headers), HttpResponse.BodyHandlers.ofString());
    }

    private HttpResponse<String> send(String path, String... headers) throws Exception {
        return CLIENT.send(get(path, headers), HttpResponse.BodyHandlers.ofString());
    }

    private HttpRequest get(String path, String... headers) {
        URI uri = server.uri(path);
        HttpRequest.Builder b = HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(20));
        if (headers.length > 0) {
            b.headers(headers);
        }
        return b.build();
    }

    @Test
    void atTheLimitARequestIsShedAtOnceWith503AndAWholeSecondsRetryAfter() throws Exception {
        LoadSheddingFilter filter = start(LoadSheddingFilter.builder("api").limit(Limit.fixed(1)).build());
        CompletableFuture<HttpResponse<String>> held = hold();
        Await.until("the first request in flight", () -> filter.inFlight() == 1);

        HttpResponse<String> shed = send("/quick");

        assertThat(shed.statusCode()).isEqualTo(503);
        assertThat(shed.headers().firstValue("Retry-After")).get().asString().matches("[1-9][0-9]*");
        assertThat(shed.headers().firstValue("Content-Type")).get().asString().startsWith("application/problem+json");
        assertThat(shed.headers().firstValue("Cache-Control")).hasValue("no-store");
        assertThat(shed.headers().firstValue("Stagger-No-Retry")).hasValue("shed");
        assertThat(shed.body()).contains("\"type\":\"urn:stagger:shedding:overloaded\"").contains("\"status\":503");
        assertThat(filter.firstAttemptsShed()).isEqualTo(1);
        release.open();
        assertThat(held.get(20, TimeUnit.SECONDS).statusCode()).isEqualTo(200);
    }

    @Test
    void answers429WhenConfiguredTo() throws Exception {
        LoadSheddingFilter filter = start(LoadSheddingFilter.builder("api").limit(Limit.fixed(1)).status(429).build());
        hold();
        Await.until("the first request in flight", () -> filter.inFlight() == 1);
        HttpResponse<String> shed = send("/quick");
        assertThat(shed.statusCode()).isEqualTo(429);
        assertThat(shed.headers().firstValue("Retry-After")).isPresent();
        assertThat(shed.body()).contains("\"title\":\"Too Many Requests\"");
    }

    @Test
    void aShedAnswerCanLeaveStaggerClientsFreeToRetryIt() throws Exception {
        LoadSheddingFilter filter = start(LoadSheddingFilter.builder("api").limit(Limit.fixed(1))
                .noRetrySignal(false).build());
        hold();
        Await.until("the first request in flight", () -> filter.inFlight() == 1);
        HttpResponse<String> shed = send("/quick");
        assertThat(shed.statusCode()).isEqualTo(503);
        assertThat(shed.headers().firstValue("Retry-After")).isPresent();
        assertThat(shed.headers().firstValue("Stagger-No-Retry")).isEmpty();
    }

    @Test
    void admitsAgainOnceARequestInFlightCompletes() throws Exception {
        LoadSheddingFilter filter = start(LoadSheddingFilter.builder("api").limit(Limit.fixed(1)).build());
        CompletableFuture<HttpResponse<String>> held = hold();
        Await.until("the first request in flight", () -> filter.inFlight() == 1);
        assertThat(send("/quick").statusCode()).isEqualTo(503);
        release.open();
        held.get(20, TimeUnit.SECONDS);
        Await.until("the first request released", () -> filter.inFlight() == 0);
        assertThat(send("/quick").statusCode()).isEqualTo(200);
        assertThat(filter.firstAttemptsAdmitted()).isEqualTo(2);
    }

    @Test
    void retriesAreShedWhileFirstAttemptsStillGetTheReservedTopOfTheLimit() throws Exception {
        LoadSheddingFilter filter = start(LoadSheddingFilter.builder("api").limit(Limit.fixed(5))
                .retryMarker(RetryMarker.attemptHeader()).firstAttemptReserve(0.2).build());
        for (int i = 0; i < 4; i++) {
            hold();
        }
        Await.until("four requests in flight", () -> filter.inFlight() == 4);

        assertThat(send("/quick", "Stagger-Attempt", "2").statusCode()).isEqualTo(503);
        assertThat(send("/quick", "Stagger-Attempt", "1").statusCode()).isEqualTo(200);
        assertThat(send("/quick").statusCode()).isEqualTo(200);
        assertThat(filter.retriesShed()).isEqualTo(1);
        assertThat(filter.firstAttemptsShed()).isZero();
    }

    @Test
    void theLatencyOfACompletedRequestMovesTheLimitButAnExceptionDoesNot() throws Exception {
        VirtualClock clock = new VirtualClock();
        LoadSheddingFilter filter = LoadSheddingFilter.builder("api").clock(clock)
                .limit(AimdLimit.builder(Duration.ofSeconds(1)).initialLimit(10).build()).build();
        server = LoopbackServer.start((request, response) -> {
            clock.advance(Duration.ofSeconds(2)); // slower than the threshold
            if (request.getRequestURI().equals("/fail")) {
                throw new IllegalStateException("the handler failed");
            }
            response.setStatus(200);
        }, filter);

        assertThat(send("/fail").statusCode()).isEqualTo(500);
        assertThat(filter.limit()).isEqualTo(10);
        assertThat(filter.inFlight()).isZero();
        assertThat(send("/slow").statusCode()).isEqualTo(200);
        assertThat(filter.limit()).isEqualTo(9);
    }

    @Test
    void anAsyncRequestCountsUntilItsCycleCompletes() throws Exception {
        AtomicReference<AsyncContext> pending = new AtomicReference<>();
        LoadSheddingFilter filter = LoadSheddingFilter.builder("api").limit(Limit.fixed(1)).build();
        server = LoopbackServer.start((request, response) -> {
            if (request.getRequestURI().equals("/async")) {
                AsyncContext async = request.startAsync();
                async.setTimeout(30_000);
                pending.set(async);
            } else {
                response.setStatus(200);
            }
        }, filter);
        CompletableFuture<HttpResponse<String>> answer = CLIENT.sendAsync(get("/async"), HttpResponse.BodyHandlers.ofString());
        Await.until("the async request started", () -> pending.get() != null);

        assertThat(send("/quick").statusCode()).isEqualTo(503); // the servlet returned, the request still runs
        AsyncContext async = pending.get();
        ((jakarta.servlet.http.HttpServletResponse) async.getResponse()).setStatus(202);
        async.complete();

        assertThat(answer.get(20, TimeUnit.SECONDS).statusCode()).isEqualTo(202);
        Await.until("the async request released", () -> filter.inFlight() == 0);
        assertThat(send("/quick").statusCode()).isEqualTo(200);
    }

    @Test
    void theListenerHearsOfShedsAndLimitChangesAndCannotBreakTheResponse() throws Exception {
        List<SheddingEvent> events = new CopyOnWriteArrayList<>();
        VirtualClock clock = new VirtualClock();
        LoadSheddingFilter filter = LoadSheddingFilter.builder("api").clock(clock)
                .limit(AimdLimit.builder(Duration.ofSeconds(1)).initialLimit(1).build())
                .retryMarker(RetryMarker.attemptHeader())
                .sheddingListener(new SheddingListener() {
                    @Override
                    public void onShed(SheddingEvent.Shed event) {
                        events.add(event);
                        throw new IllegalStateException("a broken listener");
                    }

                    @Override
                    public void onLimitChanged(SheddingEvent.LimitChanged event) {
                        events.add(event);
                    }
                }).build();
        start(filter);
        hold();
        Await.until("the first request in flight", () -> filter.inFlight() == 1);

        HttpResponse<String> shed = send("/quick", "Stagger-Attempt", "3");
        release.open();
        Await.until("the first request released", () -> filter.inFlight() == 0);

        assertThat(shed.statusCode()).isEqualTo(503);
        long retryAfter = Long.parseLong(shed.headers().firstValue("Retry-After").orElseThrow());
        assertThat(events).first().isEqualTo(new SheddingEvent.Shed("api", true, 503, Duration.ofSeconds(retryAfter), 1, 1));
        assertThat(events).last().isEqualTo(new SheddingEvent.LimitChanged("api", 1, 2)); // 1 + 1/1 on a fast sample
    }
}
