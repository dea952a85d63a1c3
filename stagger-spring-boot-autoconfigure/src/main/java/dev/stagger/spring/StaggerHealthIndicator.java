package dev.stagger.spring;

import dev.stagger.CircuitBreaker;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.boot.health.contributor.Status;

/**
 * Health of the named circuit breakers: each breaker's state maps to a status
 * ({@code stagger.health.circuit-breaker-status.<closed|half-open|open>}); the worst one wins
 * (DOWN, OUT_OF_SERVICE, UNKNOWN, UP). By default an open breaker is UNKNOWN, not DOWN: it says a
 * downstream is failing, and a liveness probe that restarted this instance for it would not help.
 */
public class StaggerHealthIndicator implements HealthIndicator {
    private static final List<String> SEVERITY = List.of("DOWN", "OUT_OF_SERVICE", "UNKNOWN", "UP");

    private final StaggerRegistry registry;
    private final Map<String, String> statusByState;

    StaggerHealthIndicator(StaggerRegistry registry, Map<String, String> statusByState) {
        this.registry = registry;
        this.statusByState = Map.copyOf(statusByState);
    }

    @Override
    public Health health() {
        String worst = "UP";
        Map<String, Object> details = new LinkedHashMap<>();
        for (Map.Entry<String, CircuitBreaker> e : registry.circuitBreakers().entrySet()) {
            String state = e.getValue().state().name().toLowerCase(Locale.ROOT).replace('_', '-');
            String status = statusByState.getOrDefault(state, "UP").toUpperCase(Locale.ROOT);
            details.put(e.getKey(), Map.of("state", state, "status", status));
            if (rank(status) < rank(worst)) {
                worst = status;
            }
        }
        return Health.status(new Status(worst)).withDetails(details).build();
    }

    private static int rank(String status) {
        int i = SEVERITY.indexOf(status);
        return i < 0 ? SEVERITY.size() : i;
    }
}
