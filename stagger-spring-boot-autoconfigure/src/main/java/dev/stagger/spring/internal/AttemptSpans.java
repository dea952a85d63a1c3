package dev.stagger.spring.internal;

import dev.stagger.RetryListener;
import java.net.URI;
import java.util.function.BiConsumer;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;

/**
 * Makes each HTTP attempt Spring's clients send through Stagger its own client span: the seam
 * between the interceptor and filter (always present) and Micrometer's observation (present only
 * with stagger-observability and an {@code ObservationRegistry}).
 */
public interface AttemptSpans {
    /** No spans: what the clients use without an observation registry. */
    AttemptSpans NONE = (method, uri, header) -> null;

    /** Key of the current observation in a Reactor context (Micrometer's {@code ObservationThreadLocalAccessor.KEY}). */
    String REACTOR_KEY = "micrometer.observation";

    /**
     * Starts the span of one attempt about to be sent, writing its trace context through
     * {@code header}; null when there is none to start.
     */
    @Nullable Span start(String method, URI uri, BiConsumer<String, String> header);

    /**
     * Makes the observation a Reactor context holds ({@code WebClient}'s own, under
     * {@link #REACTOR_KEY}) current on this thread until the returned scope closes, so a Stagger
     * call started inside is its child; null when there is none.
     */
    default RetryListener.@Nullable Scope resume(Function<String, Object> reactorContext) {
        return null;
    }

    /** One attempt's span, started. */
    interface Span {
        /** Makes it current on this thread until the returned scope closes. */
        RetryListener.Scope open();

        /** Ends it: {@code status} 0 when no response came. */
        void stop(int status, @Nullable Throwable failure);
    }
}
