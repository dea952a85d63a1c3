package dev.stagger.sim;

import dev.stagger.Backoff;
import dev.stagger.Jitter;
import java.time.Duration;
import java.util.Arrays;
import java.util.Locale;
import java.util.stream.Collectors;

/**
 * The backoff strategies the simulator compares, each built from Stagger's real {@link Backoff}
 * and {@link Jitter} types, so a simulated wait is exactly the wait a production call would take.
 */
public enum Strategy {
    /** Retry at once: {@link Backoff#none()}. The thundering herd at its worst. */
    NONE("none"),
    /** {@code min(cap, base·2^(k-1))} with no jitter: clients that collided collide again. */
    EXPONENTIAL("exponential"),
    /** AWS full jitter: {@code U(0, min(cap, base·2^(k-1)))}. */
    FULL_JITTER("full-jitter"),
    /** AWS equal jitter: half the exponential delay plus {@code U(0, half)}. */
    EQUAL_JITTER("equal-jitter"),
    /** AWS decorrelated jitter: {@code min(cap, U(base, 3·previous))}. */
    DECORRELATED_JITTER("decorrelated-jitter"),
    /** The exponential delay plus {@code U(0, 0.3·delay)}: jitter that only ever adds. */
    PROPORTIONAL_JITTER("proportional-jitter"),
    /** Polly v8 decorrelated jitter v2, with {@code base} as the median first delay. */
    POLLY_V2("polly-v2");

    private final String label;

    Strategy(String label) {
        this.label = label;
    }

    /** The name used on the command line and in results, e.g. {@code full-jitter}. */
    public String label() {
        return label;
    }

    /** The real backoff this strategy stands for, with the given first delay and ceiling. */
    public Backoff backoff(Duration base, Duration cap) {
        return switch (this) {
            case NONE -> Backoff.none();
            case EXPONENTIAL -> Backoff.exponential(base).maxDelay(cap);
            case FULL_JITTER -> Backoff.exponential(base).maxDelay(cap).jitter(Jitter.full());
            case EQUAL_JITTER -> Backoff.exponential(base).maxDelay(cap).jitter(Jitter.equal());
            case DECORRELATED_JITTER -> Backoff.decorrelated(base, cap);
            case PROPORTIONAL_JITTER -> Backoff.exponential(base).maxDelay(cap).jitter(Jitter.proportional(0.3));
            case POLLY_V2 -> Backoff.pollyDecorrelatedJitterV2(base, cap);
        };
    }

    /**
     * Finds a strategy by its label (case-insensitive).
     *
     * @throws IllegalArgumentException naming the unknown value and the known ones
     */
    public static Strategy parse(String label) {
        String wanted = label == null ? "" : label.trim().toLowerCase(Locale.ROOT);
        for (Strategy s : values()) {
            if (s.label.equals(wanted)) {
                return s;
            }
        }
        throw new IllegalArgumentException("strategy must be one of " + labels() + ", got '" + label + "'");
    }

    /** Every label, comma-separated, in declaration order. */
    public static String labels() {
        return Arrays.stream(values()).map(Strategy::label).collect(Collectors.joining(", "));
    }
}
