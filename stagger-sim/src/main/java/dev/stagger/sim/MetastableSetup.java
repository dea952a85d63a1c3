package dev.stagger.sim;

import java.util.Objects;

/**
 * One client (and server) set-up of the {@code metastable} scenario: the retry policy, and which
 * guards are on. The six {@link MetastableScenario}s are fixed set-ups; the demo page builds any
 * combination from switches.
 *
 * @param label the name in results and charts
 * @param retries the clients' retry policy
 * @param budget share one {@link dev.stagger.RetryBudget} (defaults) among all clients
 * @param throttle share one {@link dev.stagger.AdaptiveThrottle} (defaults) among all clients
 * @param shedding the server sheds what it cannot serve soon with 503 and Retry-After
 */
public record MetastableSetup(String label, Retries retries, boolean budget, boolean throttle, boolean shedding) {

    /** The clients' retry policy; every one times an attempt out after the configured timeout. */
    public enum Retries {
        /** {@code Backoff.none()}, no attempt limit. */
        NAIVE,
        /** 3 attempts, exponential 200 ms x2 up to 5 s, no jitter. */
        EXPONENTIAL,
        /** {@code RetryPolicy.builder().build()}: 3 attempts, 200 ms x2 up to 5 s, full jitter. */
        DEFAULTS
    }

    public MetastableSetup {
        Objects.requireNonNull(label, "label must not be null");
        Objects.requireNonNull(retries, "retries must not be null");
    }

    /** One line saying what the clients (and the server) do. */
    public String description() {
        String policy = switch (retries) {
            case NAIVE -> "retry at once, no attempt limit";
            case EXPONENTIAL -> "exponential 200 ms x2, no jitter, 3 attempts";
            case DEFAULTS -> "Stagger's default policy";
        };
        return policy + (budget ? " + budget" : "") + (throttle ? " + throttle" : "") + (shedding ? " + server shedding" : "");
    }

    /** A set-up named after what it does, e.g. {@code defaults+budget+shedding}. */
    public static MetastableSetup of(Retries retries, boolean budget, boolean throttle, boolean shedding) {
        String label = retries.name().toLowerCase(java.util.Locale.ROOT) + (budget ? "+budget" : "")
                + (throttle ? "+throttle" : "") + (shedding ? "+shedding" : "");
        return new MetastableSetup(label, retries, budget, throttle, shedding);
    }
}
