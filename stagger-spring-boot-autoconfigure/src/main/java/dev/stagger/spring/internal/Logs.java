package dev.stagger.spring.internal;

import dev.stagger.RetryListener;
import dev.stagger.http.RetryingHttpClient;
import dev.stagger.observability.HttpRetryLog;
import dev.stagger.observability.RetryLog;

/** stagger-observability's log lines; loaded only when it is present. */
final class Logs {
    private Logs() {
    }

    static boolean isRetryLog(RetryListener listener) {
        return listener instanceof RetryLog;
    }

    static void addHttpLog(RetryingHttpClient.Builder builder) {
        builder.httpListener(new HttpRetryLog(RetryLog.builder().build()));
    }
}
