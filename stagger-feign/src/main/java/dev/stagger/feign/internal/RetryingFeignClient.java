package dev.stagger.feign.internal;

import dev.stagger.http.HttpTransport;
import dev.stagger.http.RetryingHttpClient;
import dev.stagger.http.internal.BlockingFailures;
import dev.stagger.http.StaggerHeaders;
import feign.Client;
import feign.Request;
import feign.Response;
import java.io.IOException;
import java.net.URI;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/** A Feign {@link Client} whose requests' attempts go through {@link RetryingHttpClient#execute}. */
public final class RetryingFeignClient implements Client {
    private final Client delegate;
    private final RetryingHttpClient rules;

    public RetryingFeignClient(Client delegate, RetryingHttpClient rules) {
        this.delegate = delegate;
        this.rules = rules;
    }

    @Override
    public Response execute(Request request, Request.Options options) throws IOException {
        RetryingHttpClient.Exchange exchange = rules.exchange(request.httpMethod().name(), URI.create(request.url()),
                name -> first(request.headers(), name));
        try {
            return rules.execute(exchange, TRANSPORT, attempt -> {
                Map<String, Collection<String>> headers = new TreeMap<>(String.CASE_INSENSITIVE_ORDER);
                headers.putAll(request.headers());
                exchange.idempotencyKeyHeader().ifPresent(key -> headers.put("Idempotency-Key", List.of(key)));
                StaggerHeaders.forAttempt(attempt, (name, value) -> headers.put(name, List.of(value)));
                return delegate.execute(Request.create(request.httpMethod(), request.url(), headers, request.body(),
                        request.charset(), request.requestTemplate()), options);
            });
        } catch (Exception e) {
            throw BlockingFailures.asIOException(e);
        }
    }

    private static Optional<String> first(Map<String, Collection<String>> headers, String name) {
        for (Map.Entry<String, Collection<String>> e : headers.entrySet()) {
            if (e.getKey().equalsIgnoreCase(name) && !e.getValue().isEmpty()) {
                return Optional.ofNullable(e.getValue().iterator().next());
            }
        }
        return Optional.empty();
    }

    /** Feign's responses: a discarded one is closed (its body stream with it). */
    private static final HttpTransport<Response> TRANSPORT = new HttpTransport<>() {
        @Override
        public int statusCode(Response response) {
            return response.status();
        }

        @Override
        public Optional<String> header(Response response, String name) {
            return first(response.headers(), name);
        }

        @Override
        public void discard(Response response) {
            try {
                response.close();
            } catch (RuntimeException ignored) {
                // thrown away either way
            }
        }
    };

    @Override
    public String toString() {
        return "RetryingFeignClient{" + rules.service() + ", " + delegate + "}";
    }
}
