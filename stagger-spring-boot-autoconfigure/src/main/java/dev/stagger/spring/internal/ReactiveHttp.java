package dev.stagger.spring.internal;

import dev.stagger.AttemptContext;
import dev.stagger.RetryListener;
import dev.stagger.http.HttpTransport;
import dev.stagger.http.RetryingHttpClient;
import dev.stagger.http.StaggerHeaders;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;
import org.springframework.core.io.buffer.DataBufferUtils;
import org.springframework.http.client.reactive.ClientHttpResponse;
import org.springframework.web.reactive.function.client.ClientRequest;
import org.springframework.web.reactive.function.client.ClientResponse;
import org.springframework.web.reactive.function.client.ExchangeFilterFunction;
import org.springframework.web.reactive.function.client.ExchangeFunction;
import reactor.core.publisher.Mono;

/**
 * {@code WebClient}: an exchange filter running each request's attempts through
 * {@link RetryingHttpClient#executeAsync} (waits scheduled, no thread blocked). Loaded only when
 * Spring WebFlux is present.
 */
public final class ReactiveHttp {
    private ReactiveHttp() {
    }

    static final HttpTransport<ClientResponse> TRANSPORT = new HttpTransport<>() {
        @Override
        public int statusCode(ClientResponse response) {
            return response.statusCode().value();
        }

        @Override
        public Optional<String> header(ClientResponse response, String name) {
            return response.headers().header(name).stream().findFirst();
        }

        @Override
        public void discard(ClientResponse response) {
            response.releaseBody().subscribe(ignored -> { }, ignored -> { });
        }

        @Override
        public boolean owns(Object response) {
            return response instanceof ClientResponse;
        }

        @Override
        public boolean concurrentAttempts() {
            return true; // each attempt executes the rest of the chain (or exchange) on its own
        }
    };

    static ClientResponse cast(Object o) {
        return (ClientResponse) o;
    }

    /**
     * Sends one attempt. Cancelling the future cancels the exchange (a hedge's loser); a connector
     * that answers anyway (Apache HttpClient's does not abort a cancelled exchange) has the answer
     * handed to Reactor's discard hook, which releases its body so the connection is not leaked.
     */
    private static CompletableFuture<ClientResponse> exchange(ExchangeFunction next, ClientRequest request) {
        return next.exchange(request).doOnDiscard(Object.class, ReactiveHttp::release).toFuture();
    }

    /** Releases an answer nobody will read: a {@code ClientResponse}, or a connector's response under it. */
    private static void release(Object discarded) {
        if (discarded instanceof ClientResponse response) {
            TRANSPORT.discard(response);
        } else if (discarded instanceof ClientHttpResponse response) {
            response.getBody().subscribe(DataBufferUtils::release, ignored -> { });
        }
    }

    /** One attempt, its own client span when there are spans. */
    private static CompletableFuture<ClientResponse> send(ClientRequest.Builder builder, ClientRequest request,
                                                          ExchangeFunction next, AttemptSpans spans) {
        AttemptSpans.Span span = spans.start(request.method().name(), request.url(),
                (name, value) -> builder.headers(h -> h.set(name, value)));
        if (span == null) {
            return exchange(next, builder.build());
        }
        CompletableFuture<ClientResponse> sent;
        RetryListener.Scope scope = span.open();
        try {
            sent = exchange(next, builder.build());
        } catch (RuntimeException | Error e) {
            scope.close();
            span.stop(0, e);
            throw e;
        }
        scope.close();
        CompletableFuture<ClientResponse> seen = sent.whenComplete(
                (response, failure) -> span.stop(response == null ? 0 : response.statusCode().value(), failure));
        seen.whenComplete((response, failure) -> {
            // a hedge's loser: cancelling the dependent future must cancel the exchange, or release what it answered
            if (seen.isCancelled() && !sent.cancel(true)) {
                sent.thenAccept(TRANSPORT::discard);
            }
        });
        return seen;
    }

    /** A filter applying {@code client}'s rules to every exchange. */
    public static ExchangeFilterFunction filter(RetryingHttpClient client, AttemptSpans spans) {
        return (ClientRequest request, ExchangeFunction next) -> Mono.deferContextual(context -> {
            RetryingHttpClient.Exchange exchange = client.exchange(request.method().name(), request.url(),
                    name -> Optional.ofNullable(request.headers().getFirst(name)));
            ClientRequest toSend = exchange.idempotencyKeyHeader()
                    .map(key -> ClientRequest.from(request).header("Idempotency-Key", key).build())
                    .orElse(request);
            // inside an annotated reactive method's attempt (whatever thread subscribes): run as part of it
            AttemptContext around = context.getOrDefault(ReactorRetries.ATTEMPT, null);
            Supplier<CompletableFuture<ClientResponse>> call = () -> client.executeAsync(exchange, TRANSPORT, attempt -> {
                ClientRequest.Builder builder = ClientRequest.from(toSend);
                StaggerHeaders.forAttempt(attempt, (name, value) -> builder.headers(h -> h.set(name, value)));
                return send(builder, toSend, next, spans);
            });
            return Mono.fromFuture(() -> {
                // WebClient's own observation, from the Reactor context: the Stagger call is its child
                RetryListener.Scope parent = spans.resume(key -> context.getOrDefault(key, null));
                try {
                    return around == null ? call.get() : around.runInside(call);
                } finally {
                    if (parent != null) {
                        parent.close();
                    }
                }
            });
        });
    }
}
