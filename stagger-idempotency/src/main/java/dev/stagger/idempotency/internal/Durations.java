package dev.stagger.idempotency.internal;

import java.time.Duration;

/** Argument checks with messages that name the field and the bad value. */
public final class Durations {
    private Durations() {
    }

    public static Duration positive(String field, Duration value) {
        if (value == null || value.isZero() || value.isNegative()) {
            throw new IllegalArgumentException(field + " must be positive, got " + value);
        }
        return value;
    }

    public static long millis(String field, Duration value) {
        positive(field, value);
        try {
            return value.toMillis();
        } catch (ArithmeticException e) {
            throw new IllegalArgumentException(field + " is too long, got " + value, e);
        }
    }
}
