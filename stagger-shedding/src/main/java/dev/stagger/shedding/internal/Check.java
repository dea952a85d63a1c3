package dev.stagger.shedding.internal;

import java.time.Duration;
import java.util.Objects;

/**
 * Configuration checks. A null is a {@link NullPointerException} "{@code <field> must not be
 * null}"; a bad value is an {@link IllegalArgumentException} naming the field and the value (a
 * long text is echoed as its first 64 characters and its length).
 */
public final class Check {
    private static final int ECHO = 64;

    private Check() {
    }

    public static <T> T notNull(String field, T value) {
        return Objects.requireNonNull(value, () -> field + " must not be null");
    }

    public static String name(String field, String value) {
        notNull(field, value);
        if (value.isBlank() || value.length() > 200) {
            throw new IllegalArgumentException(field + " must be 1-200 characters and not blank, got " + echo(value));
        }
        return value;
    }

    public static int atLeast(String field, int value, int min) {
        if (value < min) {
            throw new IllegalArgumentException(field + " must be at least " + min + ", got " + value);
        }
        return value;
    }

    /** {@code value >= other}, where {@code other} is the value of {@code otherField}. */
    public static <T extends Comparable<T>> void notBelow(String field, T value, String otherField, T other) {
        if (value.compareTo(other) < 0) {
            throw new IllegalArgumentException(field + " must be at least " + otherField + " " + other + ", got " + value);
        }
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

    public static Duration positive(String field, Duration value) {
        notNull(field, value);
        if (value.isZero() || value.isNegative()) {
            throw new IllegalArgumentException(field + " must be positive, got " + value);
        }
        return value;
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

    /** Nanoseconds of a duration, saturating at {@link Long#MAX_VALUE}. */
    public static long nanos(Duration value) {
        try {
            return value.toNanos();
        } catch (ArithmeticException tooLong) {
            return Long.MAX_VALUE;
        }
    }

    /** The value as it may appear in a message: at most 64 characters, with the length when cut. */
    public static String echo(String value) {
        return value.length() <= ECHO ? "\"" + value + "\""
                : "\"" + value.substring(0, ECHO) + "...\" (" + value.length() + " characters)";
    }
}
