package dev.stagger.cli;

import dev.stagger.Backoff;
import dev.stagger.BackoffSpec;
import java.time.Duration;

/**
 * The backoff of {@code --base}, {@code --max-delay} and {@code --jitter}, through stagger-core's
 * {@link BackoffSpec}: its names, defaults and checks, with a refusal naming the flag.
 */
final class BackoffFlags {
    private BackoffFlags() {
    }

    /** Exponential x2 from {@code base} to {@code maxDelay}, with the jitter {@code jitter} names. */
    static Backoff backoff(Duration base, Duration maxDelay, String jitter) {
        BackoffSpec spec = BackoffSpec.defaults();
        try {
            spec = spec.withBase(base);
        } catch (IllegalArgumentException e) {
            throw flag(e, "base", "--base");
        }
        try {
            spec = spec.withMaxDelay(maxDelay);
        } catch (IllegalArgumentException e) {
            throw flag(e, "maxDelay", "--max-delay");
        }
        try {
            spec = spec.withJitter(jitter);
        } catch (IllegalArgumentException e) {
            throw flag(e, "jitter", "--jitter");
        }
        try {
            return spec.toBackoff();
        } catch (IllegalArgumentException e) { // decorrelated: the ceiling below the base
            throw flag(e, "cap", "--max-delay");
        }
    }

    /** The refusal with the flag in place of the field it starts with. */
    private static IllegalArgumentException flag(IllegalArgumentException e, String field, String flag) {
        String m = String.valueOf(e.getMessage());
        return new IllegalArgumentException(m.startsWith(field) ? flag + m.substring(field.length()) : flag + ": " + m, e);
    }
}
