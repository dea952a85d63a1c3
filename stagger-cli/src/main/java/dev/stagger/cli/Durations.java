package dev.stagger.cli;

import java.time.Duration;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import picocli.CommandLine;

/**
 * Parses the durations people type on a command line: {@code 200ms}, {@code 5s}, {@code 1m},
 * {@code 1h}, {@code 1.5s}, or a bare number of milliseconds ({@code 1500}). Also a picocli type
 * converter, so options can be declared as {@link Duration}:
 * {@code @Option(names = "--base", converter = Durations.class) Duration base;}.
 */
public final class Durations implements CommandLine.ITypeConverter<Duration> {
    private static final Pattern FORMAT = Pattern.compile("(\\d+(?:\\.\\d+)?)\\s*(ms|s|m|h)?");

    /**
     * @throws IllegalArgumentException naming the text when it is not a non-negative duration in
     *     one of the accepted forms
     */
    public static Duration parse(String text) {
        if (text == null) {
            throw new IllegalArgumentException("duration must not be empty");
        }
        Matcher m = FORMAT.matcher(text.trim().toLowerCase(Locale.ROOT));
        if (!m.matches()) {
            throw new IllegalArgumentException("invalid duration '" + text + "': use e.g. 200ms, 5s, 1m, 1h or 1500 (millis)");
        }
        double amount = Double.parseDouble(m.group(1));
        String unit = m.group(2) == null ? "ms" : m.group(2);
        double millis = switch (unit) {
            case "ms" -> amount;
            case "s" -> amount * 1_000;
            case "m" -> amount * 60_000;
            default -> amount * 3_600_000;
        };
        if (millis > 365L * 24 * 3_600_000) {
            throw new IllegalArgumentException("invalid duration '" + text + "': longer than a year");
        }
        return Duration.ofNanos(Math.round(millis * 1_000_000));
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
