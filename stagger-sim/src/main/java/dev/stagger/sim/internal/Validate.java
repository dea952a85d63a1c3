package dev.stagger.sim.internal;

import java.time.Duration;
import java.util.List;

/** Configuration checks that name the field and the bad value. */
public final class Validate {
    private Validate() {
    }

    public static int atLeast(String field, int value, int min) {
        if (value < min) {
            throw new IllegalArgumentException(field + " must be at least " + min + ", got " + value);
        }
        return value;
    }

    public static double positive(String field, double value) {
        if (!(value > 0) || Double.isInfinite(value)) {
            throw new IllegalArgumentException(field + " must be a positive number, got " + value);
        }
        return value;
    }

    public static Duration positive(String field, Duration value) {
        if (value == null || value.isNegative() || value.isZero()) {
            throw new IllegalArgumentException(field + " must be a positive duration, got " + value);
        }
        return value;
    }

    public static Duration nonNegative(String field, Duration value) {
        if (value == null || value.isNegative()) {
            throw new IllegalArgumentException(field + " must not be negative, got " + value);
        }
        return value;
    }

    public static <T> List<T> nonEmpty(String field, List<T> values) {
        if (values == null || values.isEmpty()) {
            throw new IllegalArgumentException(field + " must not be empty, got " + values);
        }
        return List.copyOf(values);
    }
}
