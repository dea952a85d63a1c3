package dev.stagger.cli;

import java.math.BigDecimal;
import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import picocli.CommandLine;

/**
 * The one duration syntax of every {@code stagger} command: a number and a unit ({@code 200ms},
 * {@code 5s}, {@code 1.5m}, {@code 12h}, {@code 7d}) or ISO-8601 ({@code PT12H}). A bare number
 * is refused: {@code --deadline 5} meant 5 ms to the program and 5 s to most people who typed it.
 * Also the picocli converter, so options are declared as {@link Duration}
 * ({@code @Option(names = "--base", converter = Durations.class) Duration base;}) and picocli puts
 * the flag's name in front of the message.
 */
public final class Durations implements CommandLine.ITypeConverter<Duration> {
    /** Longer than any retention or deadline anyone means; also keeps every value within nanoseconds. */
    static final Duration MAX = Duration.ofDays(36_500);
    private static final Pattern SHORT = Pattern.compile("(\\d+(?:\\.\\d+)?)(ms|s|m|h|d)");
    private static final Pattern BARE_NUMBER = Pattern.compile("\\d+(?:\\.\\d+)?");
    private static final int ECHOED = 64;

    /**
     * @throws IllegalArgumentException naming the text when it is not a duration in one of the
     *     accepted forms, is negative, or is longer than 100 years
     */
    public static Duration parse(String text) {
        if (text == null) {
            throw new IllegalArgumentException("a duration must not be empty: use e.g. 200ms, 5s, 1m, 12h or 7d");
        }
        String t = text.strip().toLowerCase(Locale.ROOT);
        if (BARE_NUMBER.matcher(t).matches()) {
            throw new IllegalArgumentException(echo(text) + " has no unit: write " + t + "ms, " + t + "s, " + t + "m, "
                    + t + "h or " + t + "d");
        }
        Duration d;
        Matcher m = SHORT.matcher(t);
        if (m.matches()) {
            d = ofAmount(new BigDecimal(m.group(1)), m.group(2), text);
        } else if (t.startsWith("p")) {
            try {
                d = Duration.parse(t.toUpperCase(Locale.ROOT));
            } catch (DateTimeParseException | ArithmeticException e) {
                throw invalid(text);
            }
        } else {
            throw invalid(text);
        }
        if (d.isNegative()) {
            throw new IllegalArgumentException(echo(text) + " is negative");
        }
        if (d.compareTo(MAX) > 0) {
            throw new IllegalArgumentException(echo(text) + " is longer than 100 years");
        }
        return d;
    }

    private static Duration ofAmount(BigDecimal amount, String unit, String text) {
        BigDecimal nanosPerUnit = BigDecimal.valueOf(switch (unit) {
            case "ms" -> 1_000_000L;
            case "s" -> 1_000_000_000L;
            case "m" -> 60_000_000_000L;
            case "h" -> 3_600_000_000_000L;
            default -> 86_400_000_000_000L;
        });
        BigDecimal nanos = amount.multiply(nanosPerUnit);
        if (nanos.compareTo(BigDecimal.valueOf(MAX.toNanos())) > 0) {
            throw new IllegalArgumentException(echo(text) + " is longer than 100 years");
        }
        return Duration.ofNanos(nanos.longValue());
    }

    private static IllegalArgumentException invalid(String text) {
        return new IllegalArgumentException(echo(text) + " is not a duration: use e.g. 200ms, 5s, 1.5m, 12h, 7d or PT12H");
    }

    /** The value in quotes, cut to its first 64 characters and its length when longer. */
    private static String echo(String text) {
        return text.length() <= ECHOED ? "'" + text + "'"
                : "'" + text.substring(0, ECHOED) + "...' (" + text.length() + " chars)";
    }

    @Override
    public Duration convert(String value) {
        try {
            return parse(value);
        } catch (IllegalArgumentException e) {
            throw new CommandLine.TypeConversionException(e.getMessage());
        }
    }
}
