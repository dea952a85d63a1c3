package dev.stagger.spring.internal;

import dev.stagger.RetryListener;
import dev.stagger.http.RetryingHttpClient;
import dev.stagger.http.StaggerHeaders;
import java.io.IOException;
import java.util.Optional;
import org.springframework.http.HttpRequest;
import org.springframework.http.client.ClientHttpRequestExecution;
import org.springframework.http.client.ClientHttpRequestInterceptor;
import org.springframework.http.client.ClientHttpResponse;

/**
 * {@code RestClient} / {@code RestTemplate}: sends each request's attempts through
 * {@link RetryingHttpClient#execute}, so the status table, Retry-After, keys, breaker, budget and
 * events are the client's. Each attempt executes the rest of the interceptor chain again: add it
 * last, so interceptors that sign or trace requests run once per attempt. When the client's retry
 * hedges, a safe request's attempts may run at once, on the hedge executor's threads; they set
 * their attempt headers on the one request, each just before it is sent.
 */
public final class RetryingRequestInterceptor implements ClientHttpRequestInterceptor {
    private final RetryingHttpClient client;
    private final AttemptSpans spans;

    public RetryingRequestInterceptor(RetryingHttpClient client, AttemptSpans spans) {
        this.client = client;
        this.spans = spans;
    }

    @Override
    public ClientHttpResponse intercept(HttpRequest request, byte[] body, ClientHttpRequestExecution execution)
            throws IOException {
        RetryingHttpClient.Exchange exchange = client.exchange(request.getMethod().name(), request.getURI(),
                name -> Optional.ofNullable(request.getHeaders().getFirst(name)));
        exchange.idempotencyKeyHeader().ifPresent(key -> request.getHeaders().set("Idempotency-Key", key));
        try {
            return client.execute(exchange, SpringHttpTransports.BLOCKING, attempt -> {
                StaggerHeaders.forAttempt(attempt, request.getHeaders()::set);
                return send(request, body, execution);
            });
        } catch (IOException | RuntimeException e) {
            throw e;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new java.io.InterruptedIOException("interrupted while sending");
        } catch (Exception other) {
            throw new IOException(other);
        }
    }

    /** One attempt, its own client span when there are spans (its trace context replacing an enclosing one's). */
    private ClientHttpResponse send(HttpRequest request, byte[] body, ClientHttpRequestExecution execution) throws IOException {
        AttemptSpans.Span span = spans.start(request.getMethod().name(), request.getURI(), request.getHeaders()::set);
        if (span == null) {
            return execution.execute(request, body);
        }
        ClientHttpResponse response = null;
        Throwable failure = null;
        RetryListener.Scope scope = span.open();
        try {
            response = execution.execute(request, body);
            return response;
        } catch (IOException | RuntimeException | Error e) {
            failure = e;
            throw e;
        } finally {
            scope.close();
            span.stop(response == null ? 0 : SpringHttpTransports.BLOCKING.statusCode(response), failure);
        }
    }

    @Override
    public String toString() {
        return "RetryingRequestInterceptor{" + client.service() + "}";
    }
}
