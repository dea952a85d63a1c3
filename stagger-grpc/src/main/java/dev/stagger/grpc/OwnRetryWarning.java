package dev.stagger.grpc;

import dev.stagger.internal.Checks;

/**
 * gRPC's own retry is also configured for methods this interceptor retries: {@code method}
 * ({@code service/method}, {@code service/*} or {@code *} for every method) has a {@code policy}
 * ({@code retryPolicy} or {@code hedgingPolicy}) in the channel's service config. Both layers would
 * then retry one failure, and the attempts multiply (gRPC's up to 5 times Stagger's); gRPC's retry
 * also ignores Stagger's budget and breaker. Reported once, when the interceptor is built
 * ({@link RetryingClientInterceptor.Builder#channelServiceConfig}).
 *
 * @param method the method name as the service config names it
 * @param policy the service config's policy: {@code retryPolicy} or {@code hedgingPolicy}
 */
public record OwnRetryWarning(String method, String policy) {
    public OwnRetryWarning {
        Checks.notNull("method", method);
        Checks.notNull("policy", policy);
    }

    /** One line for a log: what is configured twice and what to do about it. */
    public String message() {
        return "gRPC's own " + policy + " is configured for " + method + ", which Stagger's interceptor also retries:"
                + " attempts multiply. Remove the " + policy + " from the service config (or build the channel with"
                + " disableRetry()), or leave these methods to one layer.";
    }
}
