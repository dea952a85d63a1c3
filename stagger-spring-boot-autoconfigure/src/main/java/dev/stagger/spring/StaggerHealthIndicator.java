package dev.stagger.spring;

import dev.stagger.CircuitBreaker;
import dev.stagger.spring.internal.PropertyCheck;
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
 * (DOWN, OUT_OF_SERVICE, then a status of the application's own such as {@code DEGRADED}, then
 * UNKNOWN, UP; Boot's aggregate across contributors follows {@code management.endpoint.health.status.order},
 * where a status of one's own must be added). By default an open breaker is UNKNOWN, not DOWN: it says a
 * downstream is failing, and a liveness probe that restarted this instance for it would not help.
 */
public class StaggerHealthIndicator implements HealthIndicator {
    /** Worst first; a status of the application's own ranks between OUT_OF_SERVICE and UNKNOWN. */
    private static final List<String> SEVERITY = List.of("DOWN", "OUT_OF_SERVICE", "UNKNOWN", "UP");
    private static final List<String> STATES = List.of("closed", "half-open", "open");
    private static final String PROPERTY = "stagger.health.circuit-breaker-status.";

    private final StaggerRegistry registry;
    private final Map<String, String> statusByState;

    /**
     * @throws org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException
     *     for a key that is not a breaker state ({@code closed}, {@code half-open}, {@code open};
     *     {@code HALF_OPEN} is read as {@code half-open}) or a blank status
     */
    StaggerHealthIndicator(StaggerRegistry registry, Map<String, String> statusByState) {
        this.registry = registry;
        Map<String, String> byState = new LinkedHashMap<>();
        statusByState.forEach((key, status) -> {
            String state = key.trim().toLowerCase(Locale.ROOT).replace('_', '-');
            if (!STATES.contains(state)) {
                throw PropertyCheck.invalid(PROPERTY + key, status, "the key must be a breaker state: closed, half-open or open");
            }
            if (status == null || status.isBlank()) {
                throw PropertyCheck.invalid(PROPERTY + key, status, "the status must not be blank (UP, DOWN, OUT_OF_SERVICE, UNKNOWN or one of your own)");
            }
            byState.put(state, status.trim().toUpperCase(Locale.ROOT));
        });
        this.statusByState = Map.copyOf(byState);
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

    /** 0 for DOWN, 2 for OUT_OF_SERVICE, 3 for a status of one's own, 4 for UNKNOWN, 6 for UP. */
    private static int rank(String status) {
        int i = SEVERITY.indexOf(status);
        return i < 0 ? 3 : 2 * i;
    }
}
