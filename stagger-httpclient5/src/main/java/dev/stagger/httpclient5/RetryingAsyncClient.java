package dev.stagger.httpclient5;

import dev.stagger.http.RetryingHttpClient;
import dev.stagger.http.StaggerHeaders;
import dev.stagger.httpclient5.internal.ApacheTransports;
import dev.stagger.httpclient5.internal.ExchangeCancellation;
import java.io.Closeable;
import java.io.IOException;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Future;
import org.apache.hc.client5.http.async.methods.SimpleHttpRequest;
import org.apache.hc.client5.http.async.methods.SimpleHttpResponse;
import org.apache.hc.client5.http.async.methods.SimpleRequestBuilder;
import org.apache.hc.client5.http.impl.async.CloseableHttpAsyncClient;
import org.apache.hc.client5.http.impl.async.HttpAsyncClientBuilder;
import org.apache.hc.core5.concurrent.FutureCallback;
import org.apache.hc.core5.io.CloseMode;

/**
 * Apache HttpClient 5's async client, each request's attempts sent through
 * {@link RetryingHttpClient#executeAsync}: the rules of {@link RetryingHttpClient#send} (status
 * table, {@code Retry-After}, one {@code Idempotency-Key} on every attempt, breaker, budget,
 * throttle, attempt and deadline headers, events), with waits scheduled on the rules' clock, never
 * by blocking a thread.
 *
 * <pre>{@code
 * RetryingHttpClient rules = RetryingHttpClient.builder().service("orders").build();
 * try (RetryingAsyncClient http = RetryingAsyncClient.of(HttpAsyncClients.custom(), rules)) {
 *     SimpleHttpResponse answer = http.execute(SimpleRequestBuilder.get("http://orders.internal/items").build()).join();
 * }
 * }</pre>
 *
 * <p>Requests and responses are {@link SimpleHttpRequest} and {@link SimpleHttpResponse}: bodies
 * held in memory, so every attempt sends the same bytes and a retried response holds no
 * connection once it has arrived. {@link #of} switches the builder's own retries off
 * ({@link HttpAsyncClientBuilder#disableAutomaticRetries()}), so each failure is retried by one
 * layer. Cancelling a returned future stops further attempts and cancels the one in flight.
 *
 * <p>When the rules' policy hedges, the requests {@link RetryingHttpClient#send} would hedge (safe
 * methods; POST and PATCH carrying an {@code Idempotency-Key}, the same on every attempt, to a
 * server that honours keys) are hedged: each attempt is an exchange of its own, and a losing one's
 * exchange is cancelled: the exchange itself, its connection closed, also in the window where the
 * client's own future would miss the cancel (a connection opened for the attempt): {@link #of} adds
 * an exec-chain handler, first in the chain, through which the future cancels every stage of its
 * exchange.
 *
 * <p>Thread-safe. Closing it closes the client.
 */
public final class RetryingAsyncClient implements Closeable {
    private final CloseableHttpAsyncClient client;
    private final RetryingHttpClient rules;

    private RetryingAsyncClient(CloseableHttpAsyncClient client, RetryingHttpClient rules) {
        this.client = client;
        this.rules = rules;
    }

    /**
     * Builds and starts a client from {@code builder}, its own retries switched off, applying
     * {@code rules} (a client built with {@link RetryingHttpClient#builder()}).
     */
    public static RetryingAsyncClient of(HttpAsyncClientBuilder builder, RetryingHttpClient rules) {
        Objects.requireNonNull(builder, "builder");
        Objects.requireNonNull(rules, "rules");
        CloseableHttpAsyncClient client = ExchangeCancellation.install(builder.disableAutomaticRetries()).build();
        client.start();
        return new RetryingAsyncClient(client, rules);
    }

    /** Sends {@code request}, retrying per the rules; the future completes with the last attempt's response. */
    public CompletableFuture<SimpleHttpResponse> execute(SimpleHttpRequest request) {
        Objects.requireNonNull(request, "request");
        RetryingHttpClient.Exchange exchange = rules.exchange(request.getMethod(), uri(request),
                name -> ApacheTransports.firstHeader(request, name));
        return rules.executeAsync(exchange, ApacheTransports.SIMPLE, attempt -> {
            SimpleRequestBuilder copy = SimpleRequestBuilder.copy(request);
            exchange.idempotencyKeyHeader().ifPresent(key -> copy.setHeader("Idempotency-Key", key));
            StaggerHeaders.forAttempt(attempt, copy::setHeader);
            return send(copy.build());
        });
    }

    private CompletableFuture<SimpleHttpResponse> send(SimpleHttpRequest request) {
        CompletableFuture<SimpleHttpResponse> result = new CompletableFuture<>();
        Future<SimpleHttpResponse> inFlight = client.execute(request, new FutureCallback<>() {
            @Override
            public void completed(SimpleHttpResponse response) {
                result.complete(response);
            }

            @Override
            public void failed(Exception failure) {
                result.completeExceptionally(failure);
            }

            @Override
            public void cancelled() {
                result.cancel(false);
            }
        });
        result.whenComplete((r, failure) -> {
            if (result.isCancelled()) {
                inFlight.cancel(true); // the exchange itself, whatever stage it is in (ExchangeCancellation)
            }
        });
        return result;
    }

    private static java.net.URI uri(SimpleHttpRequest request) {
        try {
            return request.getUri();
        } catch (java.net.URISyntaxException e) {
            throw new IllegalArgumentException("request URI: " + e.getMessage(), e);
        }
    }

    /** The underlying client (started), for its pool and its statistics. */
    public CloseableHttpAsyncClient client() {
        return client;
    }

    /** The rules this client applies. */
    public RetryingHttpClient rules() {
        return rules;
    }

    /** Closes the underlying client gracefully. */
    @Override
    public void close() {
        client.close(CloseMode.GRACEFUL);
    }

    @Override
    public String toString() {
        return "RetryingAsyncClient{" + rules.service() + "}";
    }
}
