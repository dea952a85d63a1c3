package dev.stagger.http;

/**
 * Told about every retry a {@link RetryingHttpClient} schedules, before it waits. Called on the
 * thread that finished the failed attempt; must be quick, thread-safe and must not throw (an
 * exception from a listener is ignored).
 */
@FunctionalInterface
public interface HttpRetryListener {
    void onRetry(HttpRetryEvent event);
}
