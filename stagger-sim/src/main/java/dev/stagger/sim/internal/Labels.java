package dev.stagger.sim.internal;

import java.util.List;
import java.util.Locale;
import java.util.function.Function;
import java.util.stream.Collectors;

/** Finding a named preset by its label: one rule, and one message, for every scenario's presets. */
public final class Labels {
    private Labels() {
    }

    /**
     * The preset of {@code presets} whose label is {@code label} (trimmed, case-insensitive).
     *
     * @param what what a preset is, for the message ({@code "set-up"})
     * @throws IllegalArgumentException naming the unknown value and the known ones
     */
    public static <T> T find(String what, List<T> presets, Function<T, String> labelOf, String label) {
        String wanted = label == null ? "" : label.trim().toLowerCase(Locale.ROOT);
        for (T preset : presets) {
            if (labelOf.apply(preset).equals(wanted)) {
                return preset;
            }
        }
        String shown = label == null ? "null" : label.length() > 64 ? label.substring(0, 64) + "... (" + label.length() + " chars)" : label;
        throw new IllegalArgumentException(what + " must be one of " + join(presets, labelOf) + ", got '" + shown + "'");
    }

    /** Every preset's label, comma-separated, in order. */
    public static <T> String join(List<T> presets, Function<T, String> labelOf) {
        return presets.stream().map(labelOf).collect(Collectors.joining(", "));
    }
}
