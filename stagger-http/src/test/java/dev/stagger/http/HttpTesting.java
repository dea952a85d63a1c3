package dev.stagger.http;

import dev.stagger.Backoff;
import dev.stagger.RetryPolicy;
import dev.stagger.testing.VirtualClock;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.time.Duration;

/** Shared pieces of the HTTP tests: one real JDK client, a fixed-wait policy, request builders. */
final class HttpTesting {
    /** HTTP/1.1 so the client never tries an h2c upgrade the test server does not speak. */
    static final HttpClient JDK_CLIENT = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

    /** Waits exactly 100 ms between attempts (no jitter), so waits can be asserted exactly. */
    static final Duration WAIT = Duration.ofMillis(100);

    private HttpTesting() {
    }

    static RetryPolicy fixedWaits(int attempts) {
        return RetryPolicy.builder().maxAttempts(attempts).backoff(Backoff.fixed(WAIT)).build();
    }

    static RetryingHttpClient.Builder client(VirtualClock clock, int attempts) {
        return RetryingHttpClient.builder(JDK_CLIENT).policy(fixedWaits(attempts)).clock(clock).service("orders");
    }

    static HttpRequest get(URI uri) {
        return HttpRequest.newBuilder(uri).GET().build();
    }

    static HttpRequest post(URI uri, String body) {
        return HttpRequest.newBuilder(uri).POST(HttpRequest.BodyPublishers.ofString(body)).build();
    }

    static HttpRequest method(String method, URI uri) {
        return HttpRequest.newBuilder(uri).method(method, HttpRequest.BodyPublishers.ofString("x")).build();
    }
}
