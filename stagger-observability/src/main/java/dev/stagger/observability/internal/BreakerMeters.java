package dev.stagger.observability.internal;

import dev.stagger.CircuitBreaker;
import dev.stagger.observability.RetryMetrics;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import java.util.Locale;

/**
 * A circuit breaker's meters: its state polled on scrape, its transitions counted by a listener
 * (a counter per from/to pair, created up front), its rejections read from its own counter.
 */
public final class BreakerMeters implements CircuitBreaker.Listener {
    private static final CircuitBreaker.State[] STATES = CircuitBreaker.State.values();

    private final Counter[][] transitions = new Counter[STATES.length][STATES.length];

    private BreakerMeters(MeterRegistry registry, Tags tags) {
        for (CircuitBreaker.State from : STATES) {
            for (CircuitBreaker.State to : STATES) {
                if (from != to) {
                    transitions[from.ordinal()][to.ordinal()] = Counter.builder(RetryMetrics.CIRCUIT_TRANSITIONS)
                            .description("Circuit breaker state changes")
                            .tags(tags).tag("from", stateTag(from)).tag("to", stateTag(to))
                            .register(registry);
                }
            }
        }
    }

    /** Registers the breaker's meters and starts counting its transitions. */
    public static void bind(MeterRegistry registry, Tags tags, CircuitBreaker breaker) {
        Gauge.builder(RetryMetrics.CIRCUIT_STATE, breaker, b -> stateValue(b.state()))
                .description("Circuit breaker state: 0 closed, 1 half-open, 2 open")
                .tags(tags)
                .register(registry);
        FunctionCounter.builder(RetryMetrics.CIRCUIT_REJECTED, breaker, b -> b.metrics().rejected())
                .description("Calls the circuit breaker refused")
                .tags(tags)
                .register(registry);
        breaker.subscribe(new BreakerMeters(registry, tags));
    }

    /** The gauge's value: 0 closed, 1 half-open, 2 open (higher is worse). */
    public static double stateValue(CircuitBreaker.State state) {
        return switch (state) {
            case CLOSED -> 0;
            case HALF_OPEN -> 1;
            case OPEN -> 2;
        };
    }

    /** The {@code from}/{@code to} tag value: the state in lower case ({@code half_open}). */
    public static String stateTag(CircuitBreaker.State state) {
        return state.name().toLowerCase(Locale.ROOT);
    }

    @Override
    public void onTransition(CircuitBreaker.Transition transition) {
        Counter counter = transitions[transition.from().ordinal()][transition.to().ordinal()];
        if (counter != null) {
            counter.increment();
        }
    }
}
