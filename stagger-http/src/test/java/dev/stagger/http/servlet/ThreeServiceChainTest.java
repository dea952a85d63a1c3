package dev.stagger.http.servlet;

import static org.assertj.core.api.Assertions.assertThat;

import dev.stagger.Backoff;
import dev.stagger.RetryPolicy;
import dev.stagger.RetryRefusedException;
import dev.stagger.http.RetryingHttpClient;
import dev.stagger.testsupport.Await;
import jakarta.servlet.Filter;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.UUID;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.function.Function;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Three services on loopback, each calling the next through {@link RetryingHttpClient}, the bottom
 * one always answering 503: how many requests reach the bottom per user request, and when.
 * Naive tiers (each retrying 3 times, deaf to Stagger's headers, no deadline filter) multiply:
 * 3 x 3 x 3 = 27. Stagger's tiers (the same policy, the deadline filter, the clients' defaults)
 * retry at one layer only — the one next to the failure — and never past the edge's deadline.
 */
class ThreeServiceChainTest {
    private static final HttpClient JDK = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

    private final List<AutoCloseable> services = new ArrayList<>();
    /** When each request reached the bottom service, before any filter ({@link System#nanoTime()}). */
    private final Queue<Long> bottomArrivals = new ConcurrentLinkedQueue<>();

    @AfterEach
    void stop() throws Exception {
        for (AutoCloseable s : services) {
            s.close();
        }
    }

    /** Three attempts, a fixed wait, no deadline of its own. */
    private static RetryPolicy threeAttempts(Duration wait) {
        return RetryPolicy.builder().maxAttempts(3).backoff(Backoff.fixed(wait)).build();
    }

    /** A client as a tier that knows nothing of Stagger's headers retries: every time, no budget. */
    private static RetryingHttpClient naive(String name, RetryPolicy policy) {
        return RetryingHttpClient.builder(JDK).service(name).policy(policy).withoutBudget()
                .signalsTrusted(uri -> false).build();
    }

    /** Stagger's client with {@code policy} and everything else by default (the budget of its name included). */
    private static RetryingHttpClient stagger(String name, RetryPolicy policy) {
        return RetryingHttpClient.builder(JDK).service(name).policy(policy).build();
    }

    /**
     * Starts bottom, middle and edge; returns the edge's URI. {@code client} makes each calling
     * tier's client from a unique name (budgets are per name in the process).
     */
    private URI chain(Function<String, RetryingHttpClient> client, Filter... filters) throws Exception {
        List<Filter> counted = new ArrayList<>();
        counted.add((request, response, next) -> {
            bottomArrivals.add(System.nanoTime());
            next.doFilter(request, response);
        });
        counted.addAll(List.of(filters));
        Service bottom = start(new Service((request, response) -> response.setStatus(503), counted.toArray(Filter[]::new)));
        Service middle = start(new Service(forwardTo(client.apply(unique("middle")), bottom.uri("/stock")), filters));
        Service edge = start(new Service(forwardTo(client.apply(unique("edge")), middle.uri("/stock")), filters));
        return edge.uri("/stock");
    }

    private Service start(Service s) {
        services.add(s);
        return s;
    }

    private static String unique(String name) {
        return name + "-" + UUID.randomUUID();
    }

    /** A tier: calls the next one and answers with its status (503 when the call was refused or failed). */
    private static Service.Handler forwardTo(RetryingHttpClient client, URI next) {
        return (request, response) -> {
            try {
                HttpResponse<Void> answer = client.send(HttpRequest.newBuilder(next).GET().build(),
                        HttpResponse.BodyHandlers.discarding());
                response.setStatus(answer.statusCode());
            } catch (RetryRefusedException | IOException e) {
                response.sendError(503);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                response.sendError(503);
            }
        };
    }

    /** A user's request to the edge, through the user's own retrying client. */
    private static int user(RetryingHttpClient client, URI edge) throws Exception {
        return client.send(HttpRequest.newBuilder(edge).GET().build(), HttpResponse.BodyHandlers.discarding()).statusCode();
    }

    private static DeadlineFilter deadlines() {
        return DeadlineFilter.builder().build();
    }

    @Test
    void naiveLayersSend27RequestsToTheBottomPerUserRequest() throws Exception {
        RetryPolicy policy = threeAttempts(Duration.ofMillis(5));
        URI edge = chain(name -> naive(name, policy));
        RetryingHttpClient user = naive(unique("user"), policy);
        for (int i = 1; i <= 2; i++) {
            assertThat(user(user, edge)).isEqualTo(503);
            assertThat(bottomArrivals).hasSize(27 * i);
        }
    }

    @Test
    void staggerLayersSendAtMostOneLayersAttemptsToTheBottom() throws Exception {
        RetryPolicy policy = threeAttempts(Duration.ofMillis(5));
        URI edge = chain(name -> stagger(name, policy), deadlines());
        RetryingHttpClient user = stagger(unique("user"), policy);
        int before = 0;
        for (int i = 1; i <= 5; i++) {
            HttpResponse<Void> answer = user.send(HttpRequest.newBuilder(edge).GET().build(),
                    HttpResponse.BodyHandlers.discarding());
            assertThat(answer.statusCode()).isEqualTo(503);
            assertThat(answer.headers().firstValue("Stagger-No-Retry")).as("the edge's answer says so").isPresent();
            int reached = bottomArrivals.size() - before;
            assertThat(reached).as("requests reaching the bottom for user request %d", i).isBetween(1, 3);
            before = bottomArrivals.size();
        }
    }

    @Test
    void withEveryDefaultTheBottomSeesAtMostOneLayersAttempts() throws Exception {
        URI edge = chain(name -> RetryingHttpClient.builder(JDK).service(name).build(), deadlines());
        RetryingHttpClient user = RetryingHttpClient.builder(JDK).service(unique("user")).build();
        assertThat(user(user, edge)).isEqualTo(503);
        assertThat(bottomArrivals.size()).isBetween(1, user.policy().maxAttempts());
    }

    @Test
    void noRequestReachesTheBottomAfterTheUsersDeadline() throws Exception {
        // the middle tier's attempts at about 0 and 500 ms; a third at 1000 ms would pass the 800 ms deadline
        RetryPolicy policy = threeAttempts(Duration.ofMillis(500));
        URI edge = chain(name -> stagger(name, policy), deadlines());
        RetryingHttpClient user = stagger(unique("user"), policy.toBuilder().deadline(Duration.ofMillis(800)).build());
        // warmed up (connections open, code compiled), the first attempt reaches the bottom within
        // a few ms, and the second, 500 ms later, some 300 ms before the deadline
        user(stagger(unique("warm-up"), policy), edge);
        bottomArrivals.clear();
        long deadline = System.nanoTime() + Duration.ofMillis(800).toNanos();
        assertThat(user(user, edge)).isEqualTo(503);
        assertThat(bottomArrivals).isNotEmpty().hasSizeLessThanOrEqualTo(2)
                .allSatisfy(arrival -> assertThat(arrival).as("arrival after the deadline").isLessThanOrEqualTo(deadline));
    }

    @Test
    void naiveLayersKeepSendingAfterTheUserGaveUp() throws Exception {
        // the middle's calls take about 200 ms; the edge makes three of them, 100 ms apart: 9 requests over ~800 ms
        RetryPolicy policy = threeAttempts(Duration.ofMillis(100));
        URI edge = chain(name -> naive(name, policy));
        RetryingHttpClient user = naive(unique("user"), policy.toBuilder().deadline(Duration.ofMillis(150)).build());
        long deadline = System.nanoTime() + Duration.ofMillis(150).toNanos();
        try {
            user(user, edge);
        } catch (HttpTimeoutException expected) {
            // the user gave up; the tiers go on
        }
        Await.within(Duration.ofSeconds(30), () -> bottomArrivals.size() >= 9);
        assertThat(bottomArrivals).hasSize(9);
        assertThat(bottomArrivals.stream().filter(arrival -> arrival > deadline).count())
                .as("requests reaching the bottom after the user gave up").isGreaterThanOrEqualTo(6);
    }
}
