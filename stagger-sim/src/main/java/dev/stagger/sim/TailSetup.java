package dev.stagger.sim;

import dev.stagger.sim.internal.Labels;
import java.util.List;
import java.util.Objects;

/**
 * One client set-up of the {@code tail} scenario: how its calls hedge, and whether hedges spend a
 * {@link dev.stagger.RetryBudget}. Every set-up sends its calls through one real
 * {@link dev.stagger.Retry} of 2 attempts; the hedge, when there is one, is the real
 * {@link dev.stagger.HedgePolicy} with one hedge per call.
 *
 * @param label the name in results and charts
 * @param delay when the hedge is sent
 * @param budget the hedges spend one shared {@link dev.stagger.RetryBudget} (its defaults: ratio
 *     0.1, 100 tokens, 10 retries/s floor), as retries do; without it the retry has no budget
 */
public record TailSetup(String label, Delay delay, boolean budget) {
    /** When a set-up sends its hedge. */
    public enum Delay {
        /** Never: one attempt per call. */
        NONE,
        /** After the configuration's fixed {@link TailConfig#fixedDelay()}. */
        FIXED,
        /**
         * After the configuration's {@link TailConfig#percentile()} of recent latencies (the fixed
         * delay until 100 latencies were seen: {@link dev.stagger.HedgePolicy.Builder#percentile}).
         */
        PERCENTILE
    }

    /** No hedging. */
    public static final TailSetup NONE = new TailSetup("none", Delay.NONE, false);
    /** A hedge after the fixed delay, no budget. */
    public static final TailSetup FIXED = new TailSetup("fixed", Delay.FIXED, false);
    /** A hedge after the fixed delay, spending the budget. */
    public static final TailSetup FIXED_BUDGET = new TailSetup("fixed+budget", Delay.FIXED, true);
    /** A hedge after the percentile of recent latencies, no budget. */
    public static final TailSetup PERCENTILE = new TailSetup("percentile", Delay.PERCENTILE, false);
    /** A hedge after the percentile of recent latencies, spending the budget. */
    public static final TailSetup PERCENTILE_BUDGET = new TailSetup("percentile+budget", Delay.PERCENTILE, true);

    private static final List<TailSetup> PRESETS = List.of(NONE, FIXED, FIXED_BUDGET, PERCENTILE, PERCENTILE_BUDGET);

    public TailSetup {
        Objects.requireNonNull(label, "label must not be null");
        Objects.requireNonNull(delay, "delay must not be null");
    }

    /** Every preset: none, fixed, fixed+budget, percentile, percentile+budget. */
    public static List<TailSetup> presets() {
        return PRESETS;
    }

    /** One line saying what the clients do. */
    public String description() {
        String hedge = switch (delay) {
            case NONE -> "no hedging";
            case FIXED -> "one hedge after a fixed delay";
            case PERCENTILE -> "one hedge after a percentile of recent latencies";
        };
        return hedge + (budget ? ", hedges spend a retry budget" : "");
    }

    /**
     * Finds a preset by its label (case-insensitive).
     *
     * @throws IllegalArgumentException naming the unknown value and the known ones
     */
    public static TailSetup parse(String label) {
        return Labels.find("set-up", PRESETS, TailSetup::label, label);
    }

    /** Every preset's label, comma-separated. */
    public static String labels() {
        return Labels.join(PRESETS, TailSetup::label);
    }
}
