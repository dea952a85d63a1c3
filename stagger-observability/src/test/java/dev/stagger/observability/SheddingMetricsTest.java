package dev.stagger.observability;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.stagger.shedding.Limit;
import dev.stagger.shedding.LoadSheddingFilter;
import dev.stagger.shedding.RetryMarker;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletOutputStream;
import jakarta.servlet.WriteListener;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.lang.reflect.Proxy;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

class SheddingMetricsTest {
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();

    @Test
    void publishesTheLimitWhatIsInFlightAndWhatWasAdmittedOrShedByAttempt() throws Exception {
        LoadSheddingFilter filter = LoadSheddingFilter.builder("api").limit(Limit.fixed(2))
                .retryMarker(RetryMarker.attemptHeader()).firstAttemptReserve(0.5).build();
        SheddingMetrics.of(registry).withTags(Tags.of("team", "orders")).bind(filter);

        FilterChain hold = (request, response) -> {
            FilterChain inner = (r, s) -> { };
            filter.doFilter(request("2"), response(), inner); // a retry while one is in flight: shed (room 1)
            filter.doFilter(request(null), response(), (r, s) -> {
                assertThat(gauge(SheddingMetrics.IN_FLIGHT)).isEqualTo(2.0);
                filter.doFilter(request(null), response(), inner); // a first attempt at the limit: shed
            });
        };
        filter.doFilter(request(null), response(), hold);
        filter.doFilter(request("3"), response(), (r, s) -> { }); // a retry with room: admitted

        assertThat(gauge(SheddingMetrics.LIMIT)).isEqualTo(2.0);
        assertThat(gauge(SheddingMetrics.IN_FLIGHT)).isZero();
        assertThat(gauge(SheddingMetrics.RETRY_AFTER)).isGreaterThanOrEqualTo(1.0);
        assertThat(requests("admitted", "first")).isEqualTo(2.0);
        assertThat(requests("admitted", "retry")).isEqualTo(1.0);
        assertThat(requests("shed", "first")).isEqualTo(1.0);
        assertThat(requests("shed", "retry")).isEqualTo(1.0);
        assertThat(registry.get(SheddingMetrics.LIMIT).tag("team", "orders").gauge()).isNotNull();
    }

    @Test
    void bindingAFilterTwiceIsANoOp() {
        LoadSheddingFilter filter = LoadSheddingFilter.builder("api").build();
        SheddingMetrics metrics = SheddingMetrics.of(registry);
        metrics.bind(filter);
        metrics.bind(filter);
        assertThat(registry.find(SheddingMetrics.REQUESTS).functionCounters()).hasSize(4);
        assertThat(registry.getMeters()).hasSize(7);
    }

    @Test
    void nullsAreRefusedNamingTheParameter() {
        assertThatThrownBy(() -> SheddingMetrics.of(null)).isInstanceOf(NullPointerException.class)
                .hasMessage("registry must not be null");
        assertThatThrownBy(() -> SheddingMetrics.of(registry).bind(null)).isInstanceOf(NullPointerException.class)
                .hasMessage("filter must not be null");
    }

    private double gauge(String name) {
        return registry.get(name).tag("name", "api").gauge().value();
    }

    private double requests(String outcome, String attempt) {
        return registry.get(SheddingMetrics.REQUESTS).tag("name", "api").tag("outcome", outcome).tag("attempt", attempt)
                .functionCounter().count();
    }

    /** A request carrying {@code Stagger-Attempt: attempt} when not null. */
    private static HttpServletRequest request(String attempt) {
        Map<String, Object> attributes = new HashMap<>();
        return (HttpServletRequest) Proxy.newProxyInstance(SheddingMetricsTest.class.getClassLoader(),
                new Class<?>[] {HttpServletRequest.class}, (proxy, method, args) -> {
                    switch (method.getName()) {
                        case "getHeader":
                            return "Stagger-Attempt".equals(args[0]) ? attempt : null;
                        case "getAttribute":
                            return attributes.get((String) args[0]);
                        case "setAttribute":
                            attributes.put((String) args[0], args[1]);
                            return null;
                        case "isAsyncStarted":
                            return false;
                        default:
                            throw new UnsupportedOperationException(method.getName());
                    }
                });
    }

    private static HttpServletResponse response() {
        ServletOutputStream sink = new ServletOutputStream() {
            @Override
            public boolean isReady() {
                return true;
            }

            @Override
            public void setWriteListener(WriteListener writeListener) {
            }

            @Override
            public void write(int b) {
            }
        };
        return (HttpServletResponse) Proxy.newProxyInstance(SheddingMetricsTest.class.getClassLoader(),
                new Class<?>[] {HttpServletResponse.class}, (proxy, method, args) ->
                        method.getName().equals("getOutputStream") ? sink : null);
    }
}
