package dev.stagger.http;

import java.util.Optional;

/**
 * How {@link RetryingHttpClient} reads and releases the responses of a transport other than
 * {@code java.net.http} — Spring's {@code RestClient} or {@code WebClient}, say — so that calls
 * sent through it are classified, delayed and released by the client's own rules
 * ({@link RetryingHttpClient#execute}). Implementations must be thread-safe.
 *
 * @param <R> the transport's response type
 */
public interface HttpTransport<R> {

    /** The response's status code. */
    int statusCode(R response);

    /** The first value of header {@code name} (case-insensitive), if any. */
    Optional<String> header(R response, String name);

    /**
     * Releases a response the caller will never see (it is retried, or refused by the breaker or
     * budget): drain or close its body so its connection is not leaked. Must not throw.
     */
    void discard(R response);

    /**
     * Whether {@code response} is one of this transport's responses. A hedged call
     * ({@link RetryingHttpClient#execute}) cancels its losing attempts, but one may still answer
     * after the call has ended; the client then asks its transports which one owns the answer, so
     * that one {@link #discard releases} it. A transport whose calls hedge must answer true for its
     * own responses (an {@code instanceof} test); the default, false, leaves such late answers
     * unreleased.
     */
    default boolean owns(Object response) {
        return false;
    }

    /**
     * Whether one call through this transport may have two attempts in flight at once: a hedged
     * call's ({@link RetryingHttpClient#execute}). The default, false, runs a hedging policy's
     * attempts one after another, as retries: a transport whose attempts share the call's state
     * (an OkHttp interceptor chain, an Apache exec chain) must not run them at once. A transport
     * answering true must also answer {@link #owns} for its responses.
     */
    default boolean concurrentAttempts() {
        return false;
    }
}
