package dev.stagger.spring.internal;

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
 * last, so interceptors that sign or trace requests run once per attempt.
 */
public final class RetryingRequestInterceptor implements ClientHttpRequestInterceptor {
    private final RetryingHttpClient client;

    public RetryingRequestInterceptor(RetryingHttpClient client) {
        this.client = client;
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
                return execution.execute(request, body);
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

    @Override
    public String toString() {
        return "RetryingRequestInterceptor{" + client.service() + "}";
    }
}
