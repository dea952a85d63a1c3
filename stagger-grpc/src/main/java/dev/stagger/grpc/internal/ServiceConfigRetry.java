package dev.stagger.grpc.internal;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Reads a gRPC service config (the map given to {@code ManagedChannelBuilder.defaultServiceConfig},
 * the JSON of gRFC A6's "Integration with Service Config" as Java maps and lists) for the methods
 * gRPC itself retries or hedges: each {@code methodConfig} entry with a {@code retryPolicy} or a
 * {@code hedgingPolicy}, named as {@code service/method}, {@code service/*} or {@code *}.
 */
public final class ServiceConfigRetry {
    private ServiceConfigRetry() {
    }

    /** One method name and the policy gRPC applies to it. */
    public record Entry(String method, String policy) {
    }

    /** The entries of {@code serviceConfig} that make gRPC retry or hedge on its own; empty when none. */
    public static List<Entry> retried(Map<String, ?> serviceConfig) {
        List<Entry> found = new ArrayList<>();
        if (!(serviceConfig.get("methodConfig") instanceof List<?> methodConfigs)) {
            return found;
        }
        for (Object mc : methodConfigs) {
            if (!(mc instanceof Map<?, ?> config)) {
                continue;
            }
            String policy = config.get("retryPolicy") != null ? "retryPolicy"
                    : config.get("hedgingPolicy") != null ? "hedgingPolicy" : null;
            if (policy == null) {
                continue;
            }
            if (!(config.get("name") instanceof List<?> names) || names.isEmpty()) {
                found.add(new Entry("*", policy));
                continue;
            }
            for (Object n : names) {
                if (n instanceof Map<?, ?> name) {
                    found.add(new Entry(methodName(name), policy));
                }
            }
        }
        return found;
    }

    private static String methodName(Map<?, ?> name) {
        Object service = name.get("service");
        Object method = name.get("method");
        if (!(service instanceof String s) || s.isEmpty()) {
            return "*";
        }
        return s + "/" + (method instanceof String m && !m.isEmpty() ? m : "*");
    }
}
