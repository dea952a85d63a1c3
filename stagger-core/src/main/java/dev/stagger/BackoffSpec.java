package dev.stagger;

import dev.stagger.internal.Checks;
import java.time.Duration;
import java.util.Locale;
import org.jspecify.annotations.Nullable;

/**
 * A backoff described field by field, as configuration files and command lines give it: a type,
 * a base, a multiplier, a step, a ceiling and a jitter name. Every field not set keeps the value
 * of {@link RetryPolicy#DEFAULT_BACKOFF} (exponential, 200 ms, x2, 5 s cap, full jitter), so the
 * defaults live in one place. Immutable: each setter returns a new spec; each refuses a bad value
 * at once, naming the field and echoing (a short prefix of) the value.
 *
 * <p>Types: {@code exponential} (the default), {@code fixed} (waits {@code base}), {@code linear}
 * ({@code base + step·(k-1)}, step {@code base} unless set), {@code decorrelated} (AWS decorrelated
 * jitter from {@code base} to the ceiling; it is its own randomness, so the jitter is not used)
 * and {@code none}. The ceiling applies to exponential and decorrelated always, and to fixed and
 * linear only when set. Jitter names are those of {@link Jitter#parse(String)}; the jitter name
 * {@code decorrelated} is accepted too and selects the decorrelated type.
 */
public final class BackoffSpec {
    private static final ExponentialBackoff DEFAULT = (ExponentialBackoff) RetryPolicy.DEFAULT_BACKOFF;
    private static final String TYPES = "exponential, fixed, linear, decorrelated or none";
    private static final BackoffSpec DEFAULTS =
            new BackoffSpec("exponential", DEFAULT.base(), DEFAULT.multiplier(), null, null, null, null);

    private final String type;
    private final Duration base;
    private final double multiplier;
    private final @Nullable Duration step;
    private final @Nullable Duration maxDelay;
    private final @Nullable JitterName jitter;
    private final @Nullable Double jitterFactor;

    private BackoffSpec(String type, Duration base, double multiplier, @Nullable Duration step,
            @Nullable Duration maxDelay, @Nullable JitterName jitter, @Nullable Double jitterFactor) {
        this.type = type;
        this.base = base;
        this.multiplier = multiplier;
        this.step = step;
        this.maxDelay = maxDelay;
        this.jitter = jitter;
        this.jitterFactor = jitterFactor;
    }

    /** Everything as {@link RetryPolicy#DEFAULT_BACKOFF}. */
    public static BackoffSpec defaults() {
        return DEFAULTS;
    }

    /** {@code exponential}, {@code fixed}, {@code linear}, {@code decorrelated} or {@code none}, in any case. */
    public BackoffSpec withType(String type) {
        String t = Checks.notNull("type", type).trim().toLowerCase(Locale.ROOT);
        return switch (t) {
            case "exponential", "fixed", "linear", "decorrelated", "none" ->
                    new BackoffSpec(t, base, multiplier, step, maxDelay, jitter, jitterFactor);
            default -> throw new IllegalArgumentException("type must be " + TYPES + ", got " + JitterName.echo(type));
        };
    }

    /** The first wait (the only one for {@code fixed}); positive. */
    public BackoffSpec withBase(Duration base) {
        return new BackoffSpec(type, Checks.positive("base", base), multiplier, step, maxDelay, jitter, jitterFactor);
    }

    /** Growth per retry of {@code exponential}; at least 1. */
    public BackoffSpec withMultiplier(double multiplier) {
        return new BackoffSpec(type, base, Checks.atLeast("multiplier", multiplier, 1.0), step, maxDelay, jitter,
                jitterFactor);
    }

    /** What {@code linear} adds per retry; not negative. */
    public BackoffSpec withStep(Duration step) {
        return new BackoffSpec(type, base, multiplier, Checks.nonNegative("step", step), maxDelay, jitter, jitterFactor);
    }

    /** The hard ceiling on every wait, jitter included; positive. */
    public BackoffSpec withMaxDelay(Duration maxDelay) {
        return new BackoffSpec(type, base, multiplier, step, Checks.positive("maxDelay", maxDelay), jitter,
                jitterFactor);
    }

    /**
     * A jitter name of {@link Jitter#parse(String)}, or {@code decorrelated}, which selects the
     * decorrelated type.
     */
    public BackoffSpec withJitter(String name) {
        if (Checks.notNull("jitter", name).trim().equalsIgnoreCase("decorrelated")) {
            return withType("decorrelated");
        }
        return new BackoffSpec(type, base, multiplier, step, maxDelay, JitterName.parse(name, ", or decorrelated"),
                jitterFactor);
    }

    /**
     * The factor of {@code proportional} and {@code spread} when the jitter name gives none (a
     * factor in the name wins); in [0, 1]. The other jitters ignore it.
     */
    public BackoffSpec withJitterFactor(double factor) {
        return new BackoffSpec(type, base, multiplier, step, maxDelay, jitter,
                Checks.fraction("jitter factor", factor));
    }

    /** The type, lower case. */
    public String type() {
        return type;
    }

    /**
     * The backoff. The backoff's own rules that tie two fields together (decorrelated: the
     * ceiling at least the base) are checked here, naming both.
     */
    public Backoff toBackoff() {
        Jitter j = jitter == null ? DEFAULT.jitter() : jitter.toJitter(jitterFactor);
        Duration cap = maxDelay != null ? maxDelay : DEFAULT.maxDelay();
        return switch (type) {
            case "none" -> Backoff.none();
            case "fixed" -> {
                FixedBackoff fixed = Backoff.fixed(base).jitter(j);
                yield maxDelay != null ? fixed.maxDelay(maxDelay) : fixed;
            }
            case "linear" -> {
                LinearBackoff linear = Backoff.linear(base, step != null ? step : base).jitter(j);
                yield maxDelay != null ? linear.maxDelay(maxDelay) : linear;
            }
            case "decorrelated" -> Backoff.decorrelated(base, cap);
            default -> Backoff.exponential(base).multiplier(multiplier).maxDelay(cap).jitter(j);
        };
    }

    @Override
    public String toString() {
        return "BackoffSpec[type=" + type + ", base=" + base + ", multiplier=" + multiplier + ", step=" + step
                + ", maxDelay=" + maxDelay + ", jitter=" + jitter + ", jitterFactor=" + jitterFactor + "]";
    }
}
