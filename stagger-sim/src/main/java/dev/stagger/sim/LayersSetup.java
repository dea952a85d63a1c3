package dev.stagger.sim;

import dev.stagger.sim.internal.Labels;
import java.util.List;
import java.util.Objects;

/**
 * One set-up of the {@code layers} scenario: which of Stagger's guards every tier of the chain
 * has. Each tier always retries its downstream with the same policy ({@code attempts} attempts,
 * Stagger's default backoff: 200 ms x2 up to 5 s, full jitter); the guards decide what else it does.
 *
 * @param label the name in results and charts
 * @param oneLayer a tier that gave up on a failure answers its caller with a "do not retry" signal,
 *     and callers honour it: only the tier next to the failure retries it
 * @param deadline the user's deadline travels down the chain; a tier keeps one network round trip
 *     of it in hand for its answer, never waits past the rest, and refuses at once a request whose
 *     deadline leaves no time
 * @param budget each tier shares one {@link dev.stagger.RetryBudget} (its defaults: ratio 0.1, 100
 *     tokens, 10 retries/s floor) among all the requests it handles
 */
public record LayersSetup(String label, boolean oneLayer, boolean deadline, boolean budget) {
    /** Every tier retries whatever fails below it, with no deadline: {@code attempts^tiers} attempts at the bottom. */
    public static final LayersSetup NAIVE = new LayersSetup("naive", false, false, false);
    /** Only the user's deadline is propagated: tiers still retry each other's decided failures, until it ends. */
    public static final LayersSetup DEADLINE = new LayersSetup("deadline", false, true, false);
    /** Only the one-layer rule: the tier next to the failure retries, the others honour its decision. */
    public static final LayersSetup ONE_LAYER = new LayersSetup("one-layer", true, false, false);
    /** Stagger's guards together: the one-layer rule, the propagated deadline and a retry budget per tier. */
    public static final LayersSetup STAGGER = new LayersSetup("stagger", true, true, true);

    private static final List<LayersSetup> PRESETS = List.of(NAIVE, DEADLINE, ONE_LAYER, STAGGER);

    public LayersSetup {
        Objects.requireNonNull(label, "label must not be null");
    }

    /** The named set-ups, from the unguarded to the fully guarded: naive, deadline, one-layer, stagger. */
    public static List<LayersSetup> presets() {
        return PRESETS;
    }

    /** A set-up named after its guards, e.g. {@code one-layer+budget}; {@code naive} with none. */
    public static LayersSetup of(boolean oneLayer, boolean deadline, boolean budget) {
        for (LayersSetup preset : PRESETS) {
            if (preset.oneLayer == oneLayer && preset.deadline == deadline && preset.budget == budget) {
                return preset;
            }
        }
        String label = ((oneLayer ? "+one-layer" : "") + (deadline ? "+deadline" : "") + (budget ? "+budget" : ""))
                .substring(1);
        return new LayersSetup(label, oneLayer, deadline, budget);
    }

    /** One line saying what the tiers do. */
    public String description() {
        if (!oneLayer && !deadline && !budget) {
            return "every tier retries every failure, no deadline";
        }
        StringBuilder s = new StringBuilder();
        if (oneLayer) {
            s.append(", only the tier next to the failure retries");
        }
        if (deadline) {
            s.append(", the user's deadline propagated");
        }
        if (budget) {
            s.append(", a retry budget per tier");
        }
        return s.substring(2);
    }

    /**
     * Finds a preset by its label (case-insensitive).
     *
     * @throws IllegalArgumentException naming the unknown value and the known ones
     */
    public static LayersSetup parse(String label) {
        return Labels.find("set-up", PRESETS, LayersSetup::label, label);
    }

    /** Every preset's label, comma-separated. */
    public static String labels() {
        return Labels.join(PRESETS, LayersSetup::label);
    }
}
