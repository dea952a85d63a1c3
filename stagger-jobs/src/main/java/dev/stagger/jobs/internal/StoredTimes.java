package dev.stagger.jobs.internal;

import dev.stagger.internal.Checks;
import java.time.Duration;
import java.time.Instant;

/**
 * The range of times a job store keeps: epoch milliseconds in a BIGINT, compared and added to in
 * SQL. Values outside it are refused where they are given, naming the field, instead of
 * overflowing later.
 */
public final class StoredTimes {
    /** The latest run-at time: the end of year 9999. */
    public static final Instant LATEST = Instant.parse("9999-12-31T23:59:59.999Z");
    /** The earliest run-at time: the start of year 0. */
    public static final Instant EARLIEST = Instant.parse("0000-01-01T00:00:00Z");
    /** The longest delay or retention: 1,000 years, so {@code now + delay} stays far inside a BIGINT. */
    public static final Duration LONGEST = Duration.ofDays(365_250);

    private StoredTimes() {
    }

    /** {@code value} in milliseconds, refusing null, negative and longer than {@link #LONGEST}. */
    public static long delayMillis(String field, Duration value) {
        Checks.nonNegative(field, value);
        if (value.compareTo(LONGEST) > 0) {
            throw new IllegalArgumentException(field + " must be at most " + LONGEST.toDays() + " days (1,000 years), got "
                    + value);
        }
        return value.toMillis();
    }

    /** {@code value} as epoch milliseconds, refusing null and instants outside years 0 to 9999. */
    public static Instant instant(String field, Instant value) {
        Checks.notNull(field, value);
        if (value.isBefore(EARLIEST) || value.isAfter(LATEST)) {
            throw new IllegalArgumentException(field + " must be within the years 0 to 9999, got " + value);
        }
        return value;
    }
}
