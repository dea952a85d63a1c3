package dev.stagger.observability;

import io.micrometer.common.KeyValue;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import io.micrometer.observation.ObservationView;
import io.micrometer.observation.transport.RequestReplySenderContext;
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

/**
 * A {@code java.net.http} {@link HttpClient} that makes each request it sends its own client
 * observation (a client span, with Micrometer Tracing behind the registry), whose trace context
 * the registry's propagating handler writes into the request's headers ({@code traceparent} for
 * W3C). Give it to {@code RetryingHttpClient.builder(client)} with a {@link RetryObservation}
 * listener, and every physical request of a retried call is a child of its attempt's span, with
 * {@value #RESEND_COUNT} (OpenTelemetry's HTTP convention) on every attempt after the first:
 *
 * <pre>{@code
 * HttpClient traced = ObservedHttpClient.wrap(HttpClient.newHttpClient(), observationRegistry);
 * RetryingHttpClient orders = RetryingHttpClient.builder(traced)
 *         .listener(RetryObservation.of(observationRegistry)).build();
 * }</pre>
 *
 * <p>Observation {@value #NAME} (contextual name the method, as OpenTelemetry names client
 * spans); low-cardinality keys {@value #METHOD}, {@value #STATUS} (absent when no response came)
 * and {@value #RESEND_COUNT}; high-cardinality key {@value #URL} (for spans; meters never see it).
 * The resend count is read from the Stagger attempt observation current as the request is sent
 * (its number minus one), so only a request sent inside a {@link RetryObservation} attempt carries it.
 */
public final class ObservedHttpClient extends HttpClient {
    /** The observation of one request sent. */
    public static final String NAME = "stagger.http.client.request";
    /** Key: the request's method. */
    public static final String METHOD = "http.request.method";
    /** Key: the response's status code. */
    public static final String STATUS = "http.response.status_code";
    /** Key: how many times this request was sent before (OpenTelemetry HTTP semantic conventions); absent on the first. */
    public static final String RESEND_COUNT = "http.request.resend_count";
    /** High-cardinality key: the request's URL. */
    public static final String URL = "url.full";

    private final HttpClient delegate;
    private final ObservationRegistry registry;

    private ObservedHttpClient(HttpClient delegate, ObservationRegistry registry) {
        this.delegate = delegate;
        this.registry = registry;
    }

    /** {@code delegate}, with each request it sends observed in {@code registry}. */
    public static HttpClient wrap(HttpClient delegate, ObservationRegistry registry) {
        return new ObservedHttpClient(Objects.requireNonNull(delegate, "delegate"), Objects.requireNonNull(registry, "registry"));
    }

    /** Starts the request's observation; the context's carrier collects the headers the registry's handlers add. */
    private Observation start(HttpRequest request, RequestReplySenderContext<HttpRequest.Builder, HttpResponse<?>> context) {
        context.setCarrier(HttpRequest.newBuilder(request, (name, value) -> true));
        context.setRemoteServiceAddress(request.uri().getScheme() + "://" + request.uri().getAuthority());
        Observation observation = Observation.createNotStarted(NAME, () -> context, registry)
                .contextualName(request.method())
                .lowCardinalityKeyValue(METHOD, request.method())
                .highCardinalityKeyValue(URL, request.uri().toString());
        int resends = resendCount();
        if (resends > 0) {
            observation.lowCardinalityKeyValue(RESEND_COUNT, Integer.toString(resends));
        }
        return observation.start();
    }

    /** The Stagger attempt current on this thread, minus one; 0 outside one. */
    private int resendCount() {
        for (ObservationView o = registry.getCurrentObservation(); o != null; o = o.getContextView().getParentObservation()) {
            if (RetryObservation.ATTEMPT.equals(o.getContextView().getName())) {
                KeyValue number = o.getContextView().getLowCardinalityKeyValue(RetryObservation.ATTEMPT_NUMBER);
                return number == null ? 0 : Integer.parseInt(number.getValue()) - 1;
            }
        }
        return 0;
    }

    private static RequestReplySenderContext<HttpRequest.Builder, HttpResponse<?>> context() {
        return new RequestReplySenderContext<>((carrier, key, value) -> {
            if (carrier != null) {
                carrier.setHeader(key, value);
            }
        });
    }

    private static void finish(Observation observation, RequestReplySenderContext<HttpRequest.Builder, HttpResponse<?>> context,
                               HttpResponse<?> response, Throwable failure) {
        if (response != null) {
            context.setResponse(response);
            observation.lowCardinalityKeyValue(STATUS, Integer.toString(response.statusCode()));
        }
        if (failure != null) {
            observation.error(failure);
        }
        observation.stop();
    }

    @Override
    public <T> HttpResponse<T> send(HttpRequest request, HttpResponse.BodyHandler<T> handler)
            throws IOException, InterruptedException {
        RequestReplySenderContext<HttpRequest.Builder, HttpResponse<?>> context = context();
        Observation observation = start(request, context);
        HttpResponse<T> response = null;
        Throwable failure = null;
        Observation.Scope scope = observation.openScope();
        try {
            response = delegate.send(context.getCarrier().build(), handler);
            return response;
        } catch (IOException | InterruptedException | RuntimeException | Error e) {
            failure = e;
            throw e;
        } finally {
            scope.close();
            finish(observation, context, response, failure);
        }
    }

    @Override
    public <T> CompletableFuture<HttpResponse<T>> sendAsync(HttpRequest request, HttpResponse.BodyHandler<T> handler) {
        return sendAsync(request, handler, null);
    }

    @Override
    public <T> CompletableFuture<HttpResponse<T>> sendAsync(HttpRequest request, HttpResponse.BodyHandler<T> handler,
                                                            HttpResponse.PushPromiseHandler<T> pushPromiseHandler) {
        RequestReplySenderContext<HttpRequest.Builder, HttpResponse<?>> context = context();
        Observation observation = start(request, context);
        CompletableFuture<HttpResponse<T>> sent;
        Observation.Scope scope = observation.openScope();
        try {
            sent = delegate.sendAsync(context.getCarrier().build(), handler, pushPromiseHandler);
        } catch (RuntimeException | Error e) {
            scope.close();
            finish(observation, context, null, e);
            throw e;
        }
        scope.close();
        return sent.whenComplete((response, failure) -> finish(observation, context, response, failure));
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
