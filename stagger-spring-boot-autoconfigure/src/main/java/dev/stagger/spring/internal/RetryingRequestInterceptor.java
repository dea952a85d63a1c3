package dev.stagger.spring.internal;

import dev.stagger.AttemptContext;
import dev.stagger.Clock;
import dev.stagger.RetryListener;
import dev.stagger.http.RetryingHttpClient;
import dev.stagger.http.StaggerHeaders;
import java.io.IOException;
import java.time.Duration;
import java.util.Optional;
import org.jspecify.annotations.Nullable;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpRequest;
import org.springframework.http.client.ClientHttpRequestExecution;
import org.springframework.http.client.ClientHttpRequestInterceptor;
import org.springframework.http.client.ClientHttpResponse;
import org.springframework.http.client.support.HttpRequestWrapper;

/**
 * {@code RestClient} / {@code RestTemplate}: sends each request's attempts through
 * {@link RetryingHttpClient#execute}, so the status table, Retry-After, keys, breaker, budget and
 * events are the client's. Each attempt executes the rest of the interceptor chain again: add it
 * last, so interceptors that sign or trace requests run once per attempt. When the client's retry
 * hedges, a safe request's attempts may run at once, on the hedge executor's threads: each attempt
 * sends its own copy of the request's headers, with its own attempt headers set.
 *
 * <p>When the policy has an {@code attemptTimeout}, an attempt ends when it is over (or when the
 * deadline is, if sooner), with an {@link dev.stagger.AttemptTimeoutException} the client's rules
 * judge as a timeout after sending; see {@link TimedAttempt} for how it is abandoned.
 */
public final class RetryingRequestInterceptor implements ClientHttpRequestInterceptor {
    private final RetryingHttpClient client;
    private final AttemptSpans spans;
    private final Clock clock;

    public RetryingRequestInterceptor(RetryingHttpClient client, AttemptSpans spans) {
        this(client, spans, Clock.system());
    }

    /** @param clock what an attempt's timeout is measured on */
    public RetryingRequestInterceptor(RetryingHttpClient client, AttemptSpans spans, Clock clock) {
        this.client = client;
        this.spans = spans;
        this.clock = clock;
    }

    @Override
    public ClientHttpResponse intercept(HttpRequest request, byte[] body, ClientHttpRequestExecution execution)
            throws IOException {
        RetryingHttpClient.Exchange exchange = client.exchange(request.getMethod().name(), request.getURI(),
                name -> Optional.ofNullable(request.getHeaders().getFirst(name)));
        exchange.idempotencyKeyHeader().ifPresent(key -> request.getHeaders().set("Idempotency-Key", key));
        try {
            return client.execute(exchange, SpringHttpTransports.BLOCKING, attempt -> {
                // each attempt its own headers: a hedged call's attempts may run at once
                HttpRequest own = withOwnHeaders(request);
                StaggerHeaders.forAttempt(attempt, own.getHeaders()::set);
                return send(own, body, execution, attempt);
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

    /** {@code request} with a copy of its headers, for one attempt to set its own. */
    private static HttpRequest withOwnHeaders(HttpRequest request) {
        HttpHeaders headers = HttpHeaders.copyOf(request.getHeaders());
        return new HttpRequestWrapper(request) {
            @Override
            public HttpHeaders getHeaders() {
                return headers;
            }
        };
    }

    /**
     * One attempt, its own client span when there are spans (started on the caller's thread, a
     * child of its context), bounded by the attempt's timeout when it has one.
     */
    private ClientHttpResponse send(HttpRequest request, byte[] body, ClientHttpRequestExecution execution,
                                    AttemptContext attempt) throws Exception {
        AttemptSpans.Span span = spans.start(request.getMethod().name(), request.getURI(), request.getHeaders()::set);
        // only with the policy's own attempt timeout (then shortened to the deadline left): a deadline
        // alone keeps the attempt on the caller's thread, as before, bounded by the deadline's check between attempts
        Optional<Duration> timeout = client.policy().attemptTimeout().isPresent() ? attempt.attemptTimeout() : Optional.empty();
        if (timeout.isEmpty()) {
            return execute(span, request, body, execution);
        }
        return TimedAttempt.run(() -> answered(execute(span, request, body, execution)), timeout.get(), attempt.attempt(),
                clock, SpringHttpTransports.BLOCKING::discard);
    }

    /**
     * {@code response} once its status has arrived: a request factory may return before the server
     * answers (HttpURLConnection with a body reads the status only when asked), and the attempt's
     * timeout covers waiting for the answer.
     */
    private static ClientHttpResponse answered(ClientHttpResponse response) throws IOException {
        try {
            response.getStatusCode();
            return response;
        } catch (IOException | RuntimeException e) {
            SpringHttpTransports.BLOCKING.discard(response);
            throw e;
        }
    }

    /** Executes the rest of the chain inside {@code span}'s scope (none when null). */
    private static ClientHttpResponse execute(AttemptSpans.@Nullable Span span, HttpRequest request, byte[] body,
                                              ClientHttpRequestExecution execution) throws IOException {
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
