package dev.stagger.http.internal;

import java.time.DateTimeException;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;

/**
 * Reads a {@code Retry-After} header (RFC 9110 §10.2.3): delay-seconds or an HTTP-date in any of
 * the three formats a recipient must accept (§5.6.7). A server hint is only a hint: a negative or
 * unparseable value is ignored, and a value beyond {@code max} is clamped to it, so a buggy or
 * hostile server cannot park a client for a day.
 *
 * <p>Dates are read leniently, as §5.6.7 asks of recipients: the day name must be a day name but
 * need not be the right one, names are case-insensitive, runs of whitespace count as one space, the
 * IMF-fixdate also comes without its day name, with a one-digit day, without seconds or with a
 * numeric offset (as RFC 1123 allows), and a second of 60 (a leap second) is the next second. An
 * RFC 850 date's two-digit year is the nearest year with those digits whose date is not more than
 * 50 years after {@code now}, the time the header was received; a four-digit year there is read
 * as written.
 */
public final class RetryAfter {
    /** Longer than any HTTP-date with generous whitespace: not a date. */
    private static final int MAX_DATE_LENGTH = 64;

    private static final String TIME = "(\\d{2}):(\\d{2})";
    /** IMF-fixdate and the RFC 1123 forms around it: {@code Sun, 06 Nov 1994 08:49:37 GMT}. */
    private static final Pattern IMF = Pattern.compile(
            "(?:([a-z]+), ?)?(\\d{1,2}) ([a-z]{3}) (\\d{4}) " + TIME + "(?::(\\d{2}))? (gmt|ut|utc|z|[+-]\\d{4})",
            Pattern.CASE_INSENSITIVE);
    /** RFC 850: {@code Sunday, 06-Nov-94 08:49:37 GMT}. */
    private static final Pattern RFC_850 = Pattern.compile(
            "([a-z]+), ?(\\d{1,2})-([a-z]{3})-(\\d{2}|\\d{4}) " + TIME + ":(\\d{2}) gmt",
            Pattern.CASE_INSENSITIVE);
    /** ANSI C asctime(): {@code Sun Nov  6 08:49:37 1994}, always GMT. */
    private static final Pattern ASCTIME = Pattern.compile(
            "([a-z]+) ([a-z]{3}) (\\d{1,2}) " + TIME + ":(\\d{2}) (\\d{4})",
            Pattern.CASE_INSENSITIVE);

    private static final List<String> MONTHS =
            List.of("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec");
    private static final List<String> DAYS = List.of("mon", "tue", "wed", "thu", "fri", "sat", "sun");
    private static final List<String> FULL_DAYS =
            List.of("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday");

    private RetryAfter() {
    }

    /**
     * @param value the header value, or null when absent
     * @param nowMillis the current wall-clock time: what an HTTP-date is measured from, and the
     *     receipt time that decides an RFC 850 two-digit year
     * @param max the longest wait honoured; longer values are clamped to it
     * @return the wait the server asked for (zero for a date in the past), or empty when the header
     *     is absent, negative or unparseable
     */
    public static Optional<Duration> parse(@Nullable String value, long nowMillis, Duration max) {
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
        Optional<Instant> date = parseDate(v, nowMillis);
        if (date.isEmpty()) {
            return Optional.empty();
        }
        long delta = date.get().toEpochMilli() - nowMillis;
        return Optional.of(delta <= 0 ? Duration.ZERO : clamp(Duration.ofMillis(delta), max));
    }

    /** The instant an HTTP-date names, read as the class comment says; empty when it is not one. */
    static Optional<Instant> parseDate(String value, long nowMillis) {
        String v = value.trim();
        if (v.length() > MAX_DATE_LENGTH) {
            return Optional.empty();
        }
        v = v.replaceAll("\\s+", " ");
        Matcher m = IMF.matcher(v);
        if (m.matches() && (m.group(1) == null || isDayName(m.group(1)))) {
            return instant(year(m.group(4)), m.group(3), m.group(2), m.group(5), m.group(6),
                    m.group(7) == null ? "00" : m.group(7), offsetSeconds(m.group(8)));
        }
        m = RFC_850.matcher(v);
        if (m.matches() && isDayName(m.group(1))) {
            String year = m.group(4);
            int fullYear = year.length() == 4 ? year(year)
                    : nearestYear(Integer.parseInt(year), m.group(3), m.group(2), m.group(5), m.group(6), m.group(7),
                            nowMillis);
            return instant(fullYear, m.group(3), m.group(2), m.group(5), m.group(6), m.group(7), 0);
        }
        m = ASCTIME.matcher(v);
        if (m.matches() && isDayName(m.group(1))) {
            return instant(year(m.group(7)), m.group(2), m.group(3), m.group(4), m.group(5), m.group(6), 0);
        }
        return Optional.empty();
    }

    /**
     * RFC 9110 §5.6.7: a two-digit year that would put the date more than 50 years after
     * {@code now} means the most recent year in the past with those digits. So: the latest year
     * ending in {@code yy} whose date is at most 50 years after {@code now}. The date is compared
     * field by field, so a 29 February that a candidate year lacks still compares.
     */
    private static int nearestYear(int yy, String month, String day, String hour, String minute, String second,
                                   long nowMillis) {
        LocalDateTime limit = LocalDateTime.ofEpochSecond(Math.floorDiv(nowMillis, 1000), 0, ZoneOffset.UTC)
                .plusYears(50);
        long rest = dateKey(0, monthNumber(month), Integer.parseInt(day), Integer.parseInt(hour),
                Integer.parseInt(minute), Integer.parseInt(second));
        long limitKey = dateKey(limit.getYear(), limit.getMonthValue(), limit.getDayOfMonth(), limit.getHour(),
                limit.getMinute(), limit.getSecond());
        int year = limit.getYear() - Math.floorMod(limit.getYear(), 100) + yy; // the limit's century
        while (dateKey(year, 0, 0, 0, 0, 0) + rest > limitKey) {
            year -= 100;
        }
        return year;
    }

    /** Orders (year, month, day, hour, minute, second) with second up to 60 and day up to 31. */
    private static long dateKey(int year, int month, int day, int hour, int minute, int second) {
        return ((((year * 13L + month) * 32 + day) * 24 + hour) * 60 + minute) * 61 + second;
    }

    private static Optional<Instant> instant(int year, String month, String day, String hour, String minute,
                                             String second, int offsetSeconds) {
        int s = Integer.parseInt(second);
        if (s > 60) {
            return Optional.empty();
        }
        try {
            LocalDateTime t = LocalDateTime.of(year, monthNumber(month), Integer.parseInt(day), Integer.parseInt(hour),
                    Integer.parseInt(minute), Math.min(s, 59));
            Instant instant = t.toInstant(ZoneOffset.ofTotalSeconds(offsetSeconds));
            return Optional.of(s == 60 ? instant.plusSeconds(1) : instant); // a leap second
        } catch (DateTimeException notADate) {
            return Optional.empty(); // 31 November, 24:00, an unknown month, 29 February 2100 ...
        }
    }

    private static int year(String digits) {
        return Integer.parseInt(digits);
    }

    /** 1 to 12, or 0 (which no date accepts) for an unknown name. */
    private static int monthNumber(String name) {
        return MONTHS.indexOf(name.toLowerCase(Locale.ROOT)) + 1;
    }

    private static boolean isDayName(String name) {
        String n = name.toLowerCase(Locale.ROOT);
        return DAYS.contains(n) || FULL_DAYS.contains(n);
    }

    private static int offsetSeconds(String zone) {
        char sign = zone.charAt(0);
        if (sign != '+' && sign != '-') {
            return 0; // GMT, UT, UTC, Z
        }
        int hhmm = Integer.parseInt(zone.substring(1));
        int seconds = (hhmm / 100) * 3600 + (hhmm % 100) * 60;
        return sign == '-' ? -seconds : seconds;
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
}
