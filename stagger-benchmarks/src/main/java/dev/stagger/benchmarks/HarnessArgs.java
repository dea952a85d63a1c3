package dev.stagger.benchmarks;

/** {@code --name value} arguments of the harnesses (not JMH), with defaults. */
public final class HarnessArgs {
    private final String[] args;

    public HarnessArgs(String[] args) {
        this.args = args.clone();
    }

    /** The value after {@code name}, or {@code fallback} when it is absent. */
    public String text(String name, String fallback) {
        for (int i = 0; i < args.length - 1; i++) {
            if (args[i].equals(name)) {
                return args[i + 1];
            }
        }
        return fallback;
    }

    /** A whole number of at least 1. */
    public int positive(String name, int fallback) {
        return atLeast(name, fallback, 1);
    }

    /** A whole number of at least 0. */
    public int nonNegative(String name, int fallback) {
        return atLeast(name, fallback, 0);
    }

    private int atLeast(String name, int fallback, int min) {
        String value = text(name, Integer.toString(fallback));
        int n;
        try {
            n = Integer.parseInt(value);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(name + " must be a whole number, got "
                    + (value.length() > 20 ? value.substring(0, 20) + "..." : value), e);
        }
        if (n < min) {
            throw new IllegalArgumentException(name + " must be at least " + min + ", got " + n);
        }
        return n;
    }

    /** A number above 0. */
    public double positive(String name, double fallback) {
        double x = Double.parseDouble(text(name, Double.toString(fallback)));
        if (!(x > 0) || Double.isInfinite(x)) {
            throw new IllegalArgumentException(name + " must be a positive number, got " + x);
        }
        return x;
    }
}
