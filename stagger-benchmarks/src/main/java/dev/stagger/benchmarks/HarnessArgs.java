package dev.stagger.benchmarks;

/** Reads {@code --name value} arguments of the harnesses (the programs that are not JMH benchmarks). */
public final class HarnessArgs {
    private HarnessArgs() {
    }

    /** The value after {@code name}, or {@code fallback} when it is absent. */
    public static String string(String[] args, String name, String fallback) {
        for (int i = 0; i < args.length - 1; i++) {
            if (args[i].equals(name)) {
                return args[i + 1];
            }
        }
        return fallback;
    }

    /** The positive integer after {@code name}, or {@code fallback}. */
    public static int positiveInt(String[] args, String name, int fallback) {
        String v = string(args, name, null);
        if (v == null) {
            return fallback;
        }
        int n = Integer.parseInt(v);
        if (n < 1) {
            throw new IllegalArgumentException(name + " must be at least 1, got " + n);
        }
        return n;
    }
}
