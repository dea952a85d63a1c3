package dev.stagger.sim;

import dev.stagger.sim.internal.Labels;
import java.util.List;

/**
 * The client (and server) set-ups the {@code metastable} scenario compares, from the worst to the
 * best guarded. From {@link #DEFAULTS} on, each adds one guard to the one before.
 */
public enum MetastableScenario {
    /** Retry at once, no attempt limit: a timed-out attempt is sent again straight away. */
    NAIVE("naive", "retry at once, no attempt limit"),
    /** Exponential backoff (200 ms, x2, 5 s cap) without jitter, 3 attempts. */
    EXPONENTIAL("exponential", "exponential 200 ms x2, no jitter, 3 attempts"),
    /**
     * Stagger's defaults: {@code RetryPolicy.builder().build()} (3 attempts, exponential 200 ms x2 up
     * to 5 s, full jitter) and the default budget every {@code Retry} has, one for all clients.
     */
    DEFAULTS("defaults", "Stagger's default policy"),
    /** The defaults and one shared {@link dev.stagger.RetryBudget} with its defaults. */
    BUDGET("budget", "defaults + retry budget"),
    /** As {@link #BUDGET}, and one shared {@link dev.stagger.AdaptiveThrottle} with its defaults. */
    THROTTLE("throttle", "defaults + budget + adaptive throttle"),
    /** As {@link #THROTTLE}, against a server that sheds what it cannot serve with 503 and Retry-After. */
    SHEDDING("shedding", "defaults + budget + throttle + server shedding");

    private final String label;
    private final String description;

    MetastableScenario(String label, String description) {
        this.label = label;
        this.description = description;
    }

    /** The name used on the command line and in results, e.g. {@code budget}. */
    public String label() {
        return label;
    }

    /** One line saying what the clients (and the server) do. */
    public String description() {
        return description;
    }

    /** What this scenario's clients and server do. */
    public MetastableSetup setup() {
        MetastableSetup.Retries retries = this == NAIVE ? MetastableSetup.Retries.NAIVE
                : this == EXPONENTIAL ? MetastableSetup.Retries.EXPONENTIAL : MetastableSetup.Retries.DEFAULTS;
        return new MetastableSetup(label, retries, compareTo(BUDGET) >= 0, compareTo(THROTTLE) >= 0, this == SHEDDING);
    }

    /**
     * Finds a scenario by its label (case-insensitive).
     *
     * @throws IllegalArgumentException naming the unknown value and the known ones
     */
    public static MetastableScenario parse(String label) {
        return Labels.find("scenario", List.of(values()), MetastableScenario::label, label);
    }

    /** Every label, comma-separated, in declaration order. */
    public static String labels() {
        return Labels.join(List.of(values()), MetastableScenario::label);
    }
}
