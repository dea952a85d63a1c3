package dev.stagger.internal;

import java.time.Duration;

/** Configuration validation: every message names the field and the bad value. */
public final class Checks {
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

    public static <T> T notNull(String field, T value) {
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
}
