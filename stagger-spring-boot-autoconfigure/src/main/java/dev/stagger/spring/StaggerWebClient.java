package dev.stagger.spring;

import dev.stagger.spring.internal.ReactiveHttp;
import org.springframework.web.reactive.function.client.ExchangeFilterFunction;

/**
 * {@code WebClient} filters for the named HTTP clients of {@link StaggerHttp}:
 * {@code WebClient.builder().filter(staggerWebClient.filter("orders"))}. Attempts are subscribed
 * again when Stagger's schedule says, without blocking a thread; cancelling the request stops the
 * retries; the retry's {@code attempt-timeout} bounds each attempt. The request's body inserter is
 * applied again for each attempt, so it must be repeatable ({@code bodyValue(..)} is).
 */
public final class StaggerWebClient {
    private final StaggerHttp http;

    StaggerWebClient(StaggerHttp http) {
        this.http = http;
    }

    /** A filter applying client {@code name}'s retries. */
    public ExchangeFilterFunction filter(String name) {
        return ReactiveHttp.filter(http.client(name), http.spans());
    }
}
