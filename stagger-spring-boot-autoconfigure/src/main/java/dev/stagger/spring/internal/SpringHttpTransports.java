package dev.stagger.spring.internal;

import dev.stagger.CircuitBreaker;
import dev.stagger.http.HttpTransport;
import dev.stagger.http.StatusTable;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.Optional;
import org.springframework.http.client.ClientHttpResponse;
import org.springframework.util.ClassUtils;

/**
 * Spring's HTTP responses as seen by {@link dev.stagger.http.RetryingHttpClient}'s rules: status,
 * headers, and releasing a response that is thrown away.
 */
public final class SpringHttpTransports {
    private static final boolean WEBFLUX = ClassUtils.isPresent(
            "org.springframework.web.reactive.function.client.ClientResponse", SpringHttpTransports.class.getClassLoader());

    private SpringHttpTransports() {
    }

    /** {@code RestClient} and {@code RestTemplate} responses (blocking). */
    public static final HttpTransport<ClientHttpResponse> BLOCKING = new HttpTransport<>() {
        @Override
        public int statusCode(ClientHttpResponse response) {
            try {
                return response.getStatusCode().value();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }

        @Override
        public Optional<String> header(ClientHttpResponse response, String name) {
            return Optional.ofNullable(response.getHeaders().getFirst(name));
        }

        @Override
        public void discard(ClientHttpResponse response) {
            try {
                response.close();
            } catch (RuntimeException ignored) {
                // thrown away either way
            }
        }

        @Override
        public boolean owns(Object response) {
            return response instanceof ClientHttpResponse;
        }

        @Override
        public boolean concurrentAttempts() {
            return true; // each attempt executes the rest of the chain (or exchange) on its own
        }
    };

    /**
     * What a breaker guarding Spring HTTP clients counts as a failure: any exception, and any
     * status {@code table} retries (for any of Spring's response types or the JDK's).
     */
    public static CircuitBreaker.FailurePredicate breakerFailures(StatusTable table) {
        CircuitBreaker.FailurePredicate jdk = table.failures();
        return (result, failure) -> {
            if (failure != null) {
                return true;
            }
            int status = -1;
            if (result instanceof ClientHttpResponse r) {
                status = BLOCKING.statusCode(r);
            } else if (WEBFLUX && result != null && ReactiveHttp.TRANSPORT.owns(result)) {
                status = ReactiveHttp.TRANSPORT.statusCode(ReactiveHttp.cast(result));
            } else {
                return jdk.isFailure(result, null);
            }
            return table.retries(status, true);
        };
    }
}
