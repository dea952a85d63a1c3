package dev.stagger.observability;

import io.micrometer.common.KeyValue;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import io.micrometer.observation.ObservationView;
import io.micrometer.observation.transport.RequestReplySenderContext;
import java.net.URI;
import java.util.Objects;
import java.util.function.BiConsumer;
import org.jspecify.annotations.Nullable;

/**
 * One HTTP request sent by any client, observed as a client span of its own: the piece
 * {@link ObservedHttpClient} and the Spring Boot starter's {@code RestClient} interceptor and
 * {@code WebClient} filter share, so each physical attempt carries its own {@code traceparent}
 * (written by the registry's propagating handler through the header setter given) and
 * {@value #RESEND_COUNT} after the first. A client that sends requests itself uses it around each one:
 *
 * <pre>{@code
 * HttpClientObservation.Request sent = HttpClientObservation.of(observationRegistry)
 *         .start("GET", uri, request.headers()::set);
 * try (Observation.Scope scope = sent.observation().openScope()) {
 *     response = send(request);
 * } catch (IOException e) {
 *     sent.stop(0, e);
 *     throw e;
 * }
 * sent.stop(response.statusCode(), null);
 * }</pre>
 *
 * <p>Observation {@value #NAME} (contextual name the method, as OpenTelemetry names client spans);
 * low-cardinality keys {@value #METHOD}, {@value #STATUS} (absent when no response came) and
 * {@value #RESEND_COUNT}; high-cardinality key {@value #URL} (for spans; meters never see it). The
 * resend count is read from the {@link RetryObservation} attempt current as the request starts (its
 * number minus one), so only a request sent inside an observed Stagger attempt carries it.
 */
public final class HttpClientObservation {
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

    private final ObservationRegistry registry;

    private HttpClientObservation(ObservationRegistry registry) {
        this.registry = registry;
    }

    /** Observes requests into {@code registry}. */
    public static HttpClientObservation of(ObservationRegistry registry) {
        return new HttpClientObservation(Objects.requireNonNull(registry, "registry"));
    }

    /**
     * Starts the observation of one request about to be sent, child of the observation current on
     * this thread; the registry's handlers write the trace context through {@code header}
     * (replacing a value set before, such as an enclosing client span's).
     */
    public Request start(String method, URI uri, BiConsumer<String, String> header) {
        Objects.requireNonNull(method, "method");
        Objects.requireNonNull(uri, "uri");
        Objects.requireNonNull(header, "header");
        RequestReplySenderContext<BiConsumer<String, String>, Object> context =
                new RequestReplySenderContext<>((carrier, key, value) -> {
                    if (carrier != null) {
                        carrier.accept(key, value);
                    }
                });
        context.setCarrier(header);
        context.setRemoteServiceAddress(uri.getScheme() + "://" + uri.getAuthority());
        Observation observation = Observation.createNotStarted(NAME, () -> context, registry)
                .contextualName(method)
                .lowCardinalityKeyValue(METHOD, method)
                .highCardinalityKeyValue(URL, uri.toString());
        int resends = resendCount();
        if (resends > 0) {
            observation.lowCardinalityKeyValue(RESEND_COUNT, Integer.toString(resends));
        }
        return new Request(observation.start(), context);
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

    /** One request's observation, started; {@link #stop} it once, when its response or failure is known. */
    public static final class Request {
        private final Observation observation;
        private final RequestReplySenderContext<BiConsumer<String, String>, Object> context;

        private Request(Observation observation, RequestReplySenderContext<BiConsumer<String, String>, Object> context) {
            this.observation = observation;
            this.context = context;
        }

        /** The started observation, to open a scope on while the request is sent. */
        public Observation observation() {
            return observation;
        }

        /**
         * Ends the observation.
         *
         * @param status the response's status code, or 0 when no response came
         * @param failure why no response came (or why reading it failed), or null
         */
        public void stop(int status, @Nullable Throwable failure) {
            if (status > 0) {
                context.setResponse(status);
                observation.lowCardinalityKeyValue(STATUS, Integer.toString(status));
            }
            if (failure != null) {
                observation.error(failure);
            }
            observation.stop();
        }
    }
}
