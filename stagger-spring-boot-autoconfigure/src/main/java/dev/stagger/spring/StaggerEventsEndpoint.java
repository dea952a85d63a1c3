package dev.stagger.spring;

import dev.stagger.spring.internal.EventLog;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.actuate.endpoint.annotation.Selector;
import org.springframework.boot.actuate.endpoint.web.WebEndpointResponse;

/**
 * {@code /actuator/staggerevents}: what the named retries and breakers did recently, newest first,
 * so an operator can see why calls fail without searching the logs. Types: {@code attempt} (each
 * attempt and its outcome), {@code retry} (a wait before the next attempt), {@code give-up} (a
 * call that ended without success: exhausted, not retryable, deadline, ...), {@code refusal} (a
 * call refused by a budget, a throttle or an open breaker) and {@code transition} (a breaker's
 * change of state). {@code /actuator/staggerevents/{name}} shows one retry's and breaker's events;
 * {@code ?type=give-up} keeps one type (another value answers {@code 400}).
 *
 * <p>Each name keeps its last {@code stagger.events.size} events (default 100), so the memory
 * used is bounded whatever the traffic. Events name an exception's class, never its message. The
 * events are core's own (the listeners metrics and logs are built from): a call made on a
 * {@code CircuitBreaker} directly, without a retry, reports its breaker's transitions only.
 * Like Resilience4j's {@code circuitbreakerevents} and {@code retryevents}, in one endpoint.
 */
@Endpoint(id = "staggerevents")
public class StaggerEventsEndpoint {
    private final EventLog log;

    StaggerEventsEndpoint(EventLog log) {
        this.log = log;
    }

    /** Every name's events, newest first; with {@code type}, that type's only. */
    @ReadOperation
    public WebEndpointResponse<Map<String, Object>> events(@Nullable String type) {
        return answer(null, type);
    }

    /** The events of retry or breaker {@code name}, newest first; with {@code type}, that type's only. */
    @ReadOperation
    public WebEndpointResponse<Map<String, Object>> eventsOf(@Selector String name, @Nullable String type) {
        return answer(name, type);
    }

    private WebEndpointResponse<Map<String, Object>> answer(@Nullable String name, @Nullable String type) {
        if (type != null && !EventLog.TYPES.contains(type)) {
            return new WebEndpointResponse<>(Map.of("message", "type must be one of " + EventLog.TYPES + ", got "
                    + dev.stagger.spring.internal.PropertyCheck.echo(type)), WebEndpointResponse.STATUS_BAD_REQUEST);
        }
        List<Map<String, Object>> events = log.recent(name, type);
        return new WebEndpointResponse<>(Map.of("events", events));
    }
}
