package dev.stagger.shedding;

import java.time.Duration;

/** What a {@link LoadSheddingFilter} reports to its {@link SheddingListener}. */
public sealed interface SheddingEvent permits SheddingEvent.Shed, SheddingEvent.LimitChanged {

    /** The filter's name. */
    String name();

    /**
     * A request was turned away without running.
     *
     * @param name the filter's name
     * @param retry whether the {@link RetryMarker} marked it as a retry
     * @param status the status sent, 503 or 429
     * @param retryAfter the Retry-After sent (whole seconds, jittered)
     * @param limit the concurrency limit at the time
     * @param inFlight requests in flight at the time
     */
    record Shed(String name, boolean retry, int status, Duration retryAfter, int limit, int inFlight)
            implements SheddingEvent {
    }

    /**
     * The concurrency limit changed.
     *
     * @param name the filter's name
     * @param previous the limit before
     * @param limit the limit now
     */
    record LimitChanged(String name, int previous, int limit) implements SheddingEvent {
    }
}
