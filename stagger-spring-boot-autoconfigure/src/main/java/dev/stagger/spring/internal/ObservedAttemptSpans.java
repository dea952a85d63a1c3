package dev.stagger.spring.internal;

import dev.stagger.RetryListener;
import dev.stagger.observability.HttpClientObservation;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import java.net.URI;
import java.util.function.BiConsumer;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;

/**
 * {@link AttemptSpans} through {@link HttpClientObservation}: each attempt a client observation,
 * child of the Stagger attempt current as it starts. Loaded only with stagger-observability and an
 * {@code ObservationRegistry}.
 */
public final class ObservedAttemptSpans implements AttemptSpans {
    private final HttpClientObservation observation;

    public ObservedAttemptSpans(ObservationRegistry registry) {
        this.observation = HttpClientObservation.of(registry);
    }

    @Override
    public RetryListener.@Nullable Scope resume(Function<String, Object> reactorContext) {
        return reactorContext.apply(REACTOR_KEY) instanceof Observation parent ? parent.openScope()::close : null;
    }

    @Override
    public Span start(String method, URI uri, BiConsumer<String, String> header) {
        HttpClientObservation.Request sent = observation.start(method, uri, header);
        return new Span() {
            @Override
            public RetryListener.Scope open() {
                return sent.observation().openScope()::close;
            }

            @Override
            public void stop(int status, @Nullable Throwable failure) {
                sent.stop(status, failure);
            }
        };
    }
}
