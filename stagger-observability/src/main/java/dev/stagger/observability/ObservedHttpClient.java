package dev.stagger.observability;

import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import java.io.IOException;
import java.net.Authenticator;
import java.net.CookieHandler;
import java.net.ProxySelector;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLParameters;
import org.jspecify.annotations.Nullable;

/**
 * A {@code java.net.http} {@link HttpClient} that makes each request it sends its own client
 * observation (a client span, with Micrometer Tracing behind the registry), whose trace context
 * the registry's propagating handler writes into the request's headers ({@code traceparent} for
 * W3C). Give it to {@code RetryingHttpClient.builder(client)} with a {@link RetryObservation}
 * listener, and every physical request of a retried call is a child of its attempt's span, with
 * {@value HttpClientObservation#RESEND_COUNT} (OpenTelemetry's HTTP convention) on every attempt after the first:
 *
 * <pre>{@code
 * HttpClient traced = ObservedHttpClient.wrap(HttpClient.newHttpClient(), observationRegistry);
 * RetryingHttpClient orders = RetryingHttpClient.builder(traced)
 *         .listener(RetryObservation.of(observationRegistry)).build();
 * }</pre>
 *
 * <p>The observation, its name and keys are {@link HttpClientObservation}'s.
 */
public final class ObservedHttpClient extends HttpClient {
    private final HttpClient delegate;
    private final HttpClientObservation observation;

    private ObservedHttpClient(HttpClient delegate, ObservationRegistry registry) {
        this.delegate = delegate;
        this.observation = HttpClientObservation.of(registry);
    }

    /** {@code delegate}, with each request it sends observed in {@code registry}. */
    public static HttpClient wrap(HttpClient delegate, ObservationRegistry registry) {
        return new ObservedHttpClient(Objects.requireNonNull(delegate, "delegate"), Objects.requireNonNull(registry, "registry"));
    }

    @Override
    public <T> HttpResponse<T> send(HttpRequest request, HttpResponse.BodyHandler<T> handler)
            throws IOException, InterruptedException {
        HttpRequest.Builder carrier = HttpRequest.newBuilder(request, (name, value) -> true);
        HttpClientObservation.Request sent = observation.start(request.method(), request.uri(), carrier::setHeader);
        HttpResponse<T> response = null;
        Throwable failure = null;
        Observation.Scope scope = sent.observation().openScope();
        try {
            response = delegate.send(carrier.build(), handler);
            return response;
        } catch (IOException | InterruptedException | RuntimeException | Error e) {
            failure = e;
            throw e;
        } finally {
            scope.close();
            sent.stop(response == null ? 0 : response.statusCode(), failure);
        }
    }

    @Override
    public <T> CompletableFuture<HttpResponse<T>> sendAsync(HttpRequest request, HttpResponse.BodyHandler<T> handler) {
        return sendAsync(request, handler, null);
    }

    @Override
    public <T> CompletableFuture<HttpResponse<T>> sendAsync(HttpRequest request, HttpResponse.BodyHandler<T> handler,
                                                            HttpResponse.@Nullable PushPromiseHandler<T> pushPromiseHandler) {
        HttpRequest.Builder carrier = HttpRequest.newBuilder(request, (name, value) -> true);
        HttpClientObservation.Request sent = observation.start(request.method(), request.uri(), carrier::setHeader);
        CompletableFuture<HttpResponse<T>> pending;
        Observation.Scope scope = sent.observation().openScope();
        try {
            pending = delegate.sendAsync(carrier.build(), handler, pushPromiseHandler);
        } catch (RuntimeException | Error e) {
            scope.close();
            sent.stop(0, e);
            throw e;
        }
        scope.close();
        return pending.whenComplete((response, failure) -> sent.stop(response == null ? 0 : response.statusCode(), failure));
    }

    @Override
    public Optional<CookieHandler> cookieHandler() {
        return delegate.cookieHandler();
    }

    @Override
    public Optional<Duration> connectTimeout() {
        return delegate.connectTimeout();
    }

    @Override
    public Redirect followRedirects() {
        return delegate.followRedirects();
    }

    @Override
    public Optional<ProxySelector> proxy() {
        return delegate.proxy();
    }

    @Override
    public SSLContext sslContext() {
        return delegate.sslContext();
    }

    @Override
    public SSLParameters sslParameters() {
        return delegate.sslParameters();
    }

    @Override
    public Optional<Authenticator> authenticator() {
        return delegate.authenticator();
    }

    @Override
    public Version version() {
        return delegate.version();
    }

    @Override
    public Optional<Executor> executor() {
        return delegate.executor();
    }

    @Override
    public String toString() {
        return "ObservedHttpClient{" + delegate + "}";
    }
}
