package dev.stagger.internal;

import java.time.Duration;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * The argument checks of every Stagger module (exported to them, and to no one else): a null is
 * a {@link NullPointerException} "{@code <field> must not be null}"; a bad value is an
 * {@link IllegalArgumentException} whose message names the field and the value after a short
 * prefix ({@code maxAttempts must be at least 1, got 0}), a long text echoed as its first 64
 * characters and its length ({@link #echo}).
 */
public final class Checks {
    private static final int ECHO = 64;

    private Checks() {
    }

    public static Duration positive(String field, Duration value) {
        notNull(field, value);
        if (value.isNegative() || value.isZero()) {
            throw new IllegalArgumentException(field + " must be positive, got " + value);
        }
        return value;
    }

    public static Duration nonNegative(String field, Duration value) {
        notNull(field, value);
        if (value.isNegative()) {
            throw new IllegalArgumentException(field + " must not be negative, got " + value);
        }
        return value;
    }

    /** {@link #positive(String, Duration)} in whole milliseconds; a value too long for them is refused. */
    public static long millis(String field, Duration value) {
        positive(field, value);
        try {
            return value.toMillis();
        } catch (ArithmeticException e) {
            throw new IllegalArgumentException(field + " is too long, got " + value, e);
        }
    }

    /** A duration of whole seconds in [min, max] seconds. */
    public static Duration wholeSeconds(String field, Duration value, long min, long max) {
        notNull(field, value);
        if (value.getNano() != 0 || value.getSeconds() < min || value.getSeconds() > max) {
            throw new IllegalArgumentException(field + " must be whole seconds from " + min + " s to " + max
                    + " s, got " + value);
        }
        return value;
    }

    public static <T> T notNull(String field, @Nullable T value) {
        if (value == null) {
            throw new NullPointerException(field + " must not be null");
        }
        return value;
    }

    public static int atLeast(String field, int value, int min) {
        if (value < min) {
            throw new IllegalArgumentException(field + " must be at least " + min + ", got " + value);
        }
        return value;
    }

    public static int atMost(String field, int value, int max) {
        if (value > max) {
            throw new IllegalArgumentException(field + " must be at most " + max + ", got " + value);
        }
        return value;
    }

    /** {@code value >= other}, where {@code other} is the value of {@code otherField}. */
    public static <T extends Comparable<T>> void notBelow(String field, T value, String otherField, T other) {
        if (value.compareTo(other) < 0) {
            throw new IllegalArgumentException(field + " must be at least " + otherField + " " + other + ", got " + value);
        }
    }

    /** A finite number above zero. */
    public static double positive(String field, double value) {
        if (!(value > 0) || Double.isInfinite(value)) {
            throw new IllegalArgumentException(field + " must be a positive number, got " + value);
        }
        return value;
    }

    /** {@code value} in [min, max], both inclusive; NaN and infinities are refused. */
    public static double between(String field, double value, double min, double max) {
        if (!(value >= min && value <= max)) {
            throw new IllegalArgumentException(field + " must be in [" + min + ", " + max + "], got " + value);
        }
        return value;
    }

    /** {@code value} in (min, max): both ends excluded. */
    public static double inside(String field, double value, double min, double max) {
        if (!(value > min && value < max)) {
            throw new IllegalArgumentException(field + " must be in (" + min + ", " + max + "), got " + value);
        }
        return value;
    }

    public static double fraction(String field, double value) {
        if (!(value >= 0.0 && value <= 1.0)) {
            throw new IllegalArgumentException(field + " must be in [0, 1], got " + value);
        }
        return value;
    }

    public static double atLeast(String field, double value, double min) {
        if (!(value >= min) || Double.isInfinite(value)) {
            throw new IllegalArgumentException(field + " must be a finite number >= " + min + ", got " + value);
        }
        return value;
    }

    /** Saturating conversion: durations beyond ~292 years become Long.MAX_VALUE nanoseconds. */
    public static long nanos(Duration d) {
        try {
            return d.toNanos();
        } catch (ArithmeticException overflow) {
            return d.isNegative() ? Long.MIN_VALUE : Long.MAX_VALUE;
        }
    }

    /** Clamps a double nanosecond value into [0, ceiling]; NaN becomes the ceiling. */
    public static long clampNanos(double nanos, long ceiling) {
        if (!(nanos < ceiling)) {
            return ceiling; // also NaN and +Infinity
        }
        if (nanos <= 0) {
            return 0;
        }
        return (long) nanos;
    }

    /** A text that is neither null nor blank. */
    public static String notBlank(String field, String value) {
        notNull(field, value);
        if (value.isBlank()) {
            throw new IllegalArgumentException(field + " must not be blank, got " + echo(value));
        }
        return value;
    }

    /** A name of 1 to 200 characters, not blank. */
    public static String name(String field, String value) {
        notNull(field, value);
        if (value.isBlank() || value.length() > 200) {
            throw new IllegalArgumentException(field + " must be 1-200 characters and not blank, got " + echo(value));
        }
        return value;
    }

    /** An unmodifiable copy of a list that is neither null nor empty. */
    public static <T> List<T> nonEmpty(String field, List<T> values) {
        if (values == null || values.isEmpty()) {
            throw new IllegalArgumentException(field + " must not be empty, got " + values);
        }
        return List.copyOf(values);
    }

    /** The value as it may appear in a message: at most 64 characters, with the length when cut. */
    public static String echo(String value) {
        return value.length() <= ECHO ? "\"" + value + "\""
                : "\"" + value.substring(0, ECHO) + "...\" (" + value.length() + " characters)";
    }
}
