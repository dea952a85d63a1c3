package dev.stagger.grpc;

import static org.assertj.core.api.Assertions.assertThat;

import dev.stagger.Retry;
import dev.stagger.RetryPolicy;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The start-up warning for methods gRPC's own retry (or hedging) also covers. */
class OwnRetryWarningTest {
    private final Retry retry = Retry.of("inventory", RetryPolicy.interactive());

    private static Map<String, Object> serviceConfig() {
        return Map.of("methodConfig", List.of(
                Map.of("name", List.of(Map.of("service", "test.Inventory", "method", "Get")),
                        "retryPolicy", Map.of("maxAttempts", 4.0, "retryableStatusCodes", List.of("UNAVAILABLE"))),
                Map.of("name", List.of(Map.of("service", "test.Orders")),
                        "hedgingPolicy", Map.of("maxAttempts", 2.0, "hedgingDelay", "0.1s")),
                Map.of("name", List.of(Map.of("service", "test.Quiet")), "timeout", "1s")));
    }

    @Test
    void reportsEveryMethodTheServiceConfigRetriesOrHedges() {
        List<OwnRetryWarning> heard = new ArrayList<>();

        RetryingClientInterceptor interceptor = RetryingClientInterceptor.builder(retry)
                .channelServiceConfig(serviceConfig()).onWarning(heard::add).build();

        assertThat(heard).containsExactly(new OwnRetryWarning("test.Inventory/Get", "retryPolicy"),
                new OwnRetryWarning("test.Orders/*", "hedgingPolicy"));
        assertThat(interceptor.warnings()).isEqualTo(heard);
    }

    @Test
    void aConfigWithoutRetryPoliciesWarnsOfNothing() {
        List<OwnRetryWarning> heard = new ArrayList<>();

        RetryingClientInterceptor.builder(retry)
                .channelServiceConfig(Map.of("loadBalancingConfig", List.of(Map.of("round_robin", Map.of()))))
                .onWarning(heard::add).build();

        assertThat(heard).isEmpty();
    }

    @Test
    void aNamelessMethodConfigCoversEveryMethod() {
        RetryingClientInterceptor interceptor = RetryingClientInterceptor.builder(retry)
                .channelServiceConfig(Map.of("methodConfig", List.of(Map.of("name", List.of(Map.of()),
                        "retryPolicy", Map.of("maxAttempts", 3.0)))))
                .onWarning(w -> { }).build();

        assertThat(interceptor.warnings()).extracting(OwnRetryWarning::method).containsExactly("*");
    }
}
