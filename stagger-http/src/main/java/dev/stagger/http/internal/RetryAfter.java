package dev.stagger.http.internal;

import java.time.Duration;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeFormatterBuilder;
import java.time.format.DateTimeParseException;
import java.time.temporal.ChronoField;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

/**
 * Reads a {@code Retry-After} header (RFC 9110 §10.2.3): delay-seconds or an HTTP-date in any of
 * the three formats a recipient must accept. A server hint is only a hint: a negative or
 * unparseable value is ignored, and a value beyond {@code max} is clamped to it, so a buggy or
 * hostile server cannot park a client for a day.
 */
public final class RetryAfter {
    private static final DateTimeFormatter RFC_850 = new DateTimeFormatterBuilder()
            .parseCaseInsensitive()
            .appendPattern("EEEE, dd-MMM-")
            .appendValueReduced(ChronoField.YEAR, 2, 2, 1970)
            .appendPattern(" HH:mm:ss 'GMT'")
            .toFormatter(Locale.US)
            .withZone(ZoneOffset.UTC);
    private static final DateTimeFormatter ASCTIME = new DateTimeFormatterBuilder()
            .parseCaseInsensitive()
            .appendPattern("EEE MMM d HH:mm:ss yyyy")
            .toFormatter(Locale.US)
            .withZone(ZoneOffset.UTC);
    private static final List<DateTimeFormatter> DATE_FORMATS =
            List.of(DateTimeFormatter.RFC_1123_DATE_TIME, RFC_850, ASCTIME);

    private RetryAfter() {
    }

    /**
     * @param value the header value, or null when absent
     * @param nowMillis the current wall-clock time, for HTTP-dates
     * @param max the longest wait honoured; longer values are clamped to it
     * @return the wait the server asked for (zero for a date in the past), or empty when the header
     *     is absent, negative or unparseable
     */
    public static Optional<Duration> parse(String value, long nowMillis, Duration max) {
        if (value == null) {
            return Optional.empty();
        }
        String v = value.trim();
        if (v.isEmpty()) {
            return Optional.empty();
        }
        if (allDigits(v)) {
            if (v.length() > 12) { // more than 31,000 years: absurd, clamp without overflowing
                return Optional.of(max);
            }
            return Optional.of(clamp(Duration.ofSeconds(Long.parseLong(v)), max));
        }
        Long dateMillis = parseDate(v);
        if (dateMillis == null) {
            return Optional.empty();
        }
        long delta = dateMillis - nowMillis;
        return Optional.of(delta <= 0 ? Duration.ZERO : clamp(Duration.ofMillis(delta), max));
    }

    private static Duration clamp(Duration d, Duration max) {
        return d.compareTo(max) > 0 ? max : d;
    }

    private static boolean allDigits(String v) {
        for (int i = 0; i < v.length(); i++) {
            char c = v.charAt(i);
            if (c < '0' || c > '9') {
                return false;
            }
        }
        return true;
    }

    private static Long parseDate(String v) {
        String normalized = v.replaceAll("\\s+", " ");
        for (DateTimeFormatter f : DATE_FORMATS) {
            try {
                return ZonedDateTime.parse(normalized, f).toInstant().toEpochMilli();
            } catch (DateTimeParseException notThisFormat) {
                // try the next format
            }
        }
        return null;
    }
}
