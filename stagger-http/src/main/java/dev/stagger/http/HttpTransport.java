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
}
