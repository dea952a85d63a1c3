package dev.stagger;

import dev.stagger.internal.Checks;
import java.util.Locale;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;

/**
 * The one reader of jitter names ({@code none}, {@code full}, {@code equal},
 * {@code proportional[(f)]}, {@code spread[(f)]}) behind {@link Jitter#parse(String)} and
 * {@link BackoffSpec#withJitter(String)}; not API.
 */
final class JitterName {
    /** The factor of {@code proportional} when none is given: waits grow by up to 30 %. */
    static final double PROPORTIONAL_FACTOR = 0.3;
    /** The factor of {@code spread} when none is given: ±20 %, as gRPC. */
    static final double SPREAD_FACTOR = 0.2;
    private static final String KINDS = "none, full, equal, proportional, proportional(f), spread or spread(f)";
    private static final int ECHO = 32;
    /** A plain decimal, signed so that a negative factor gets the range message: no exponent, hex or suffix. */
    private static final Pattern DECIMAL = Pattern.compile("[-+]?(\\d{1,20}(\\.\\d{0,20})?|\\.\\d{1,20})");

    private final String kind;
    private final @Nullable Double factor;

    private JitterName(String kind, @Nullable Double factor) {
        this.kind = kind;
        this.factor = factor;
    }

    /**
     * @param also further names the caller accepts, for the message (e.g. {@code ", or decorrelated"})
     */
    static JitterName parse(@Nullable String text, String also) {
        if (text == null) {
            throw new NullPointerException("jitter must not be null");
        }
        String t = text.trim().toLowerCase(Locale.ROOT);
        int open = t.indexOf('(');
        String kind = open < 0 ? t : t.substring(0, open).trim();
        if (!(kind.equals("none") || kind.equals("full") || kind.equals("equal")
                || kind.equals("proportional") || kind.equals("spread"))) {
            throw new IllegalArgumentException("jitter must be " + KINDS + also + ", got " + echo(text));
        }
        if (open < 0) {
            return new JitterName(kind, null);
        }
        if (!kind.equals("proportional") && !kind.equals("spread")) {
            throw new IllegalArgumentException("jitter " + kind + " takes no factor, got " + echo(text));
        }
        if (!t.endsWith(")")) {
            throw new IllegalArgumentException("jitter factor must be written " + kind + "(f), got " + echo(text));
        }
        String number = t.substring(open + 1, t.length() - 1).trim();
        if (!DECIMAL.matcher(number).matches()) {
            throw new IllegalArgumentException("jitter factor must be a number in [0, 1], got " + echo(text));
        }
        return new JitterName(kind, Checks.fraction("jitter factor", Double.parseDouble(number)));
    }

    /** The jitter, with {@code fallbackFactor} (when set) for a kind that takes a factor but was given none. */
    Jitter toJitter(@Nullable Double fallbackFactor) {
        return switch (kind) {
            case "none" -> Jitter.none();
            case "full" -> Jitter.full();
            case "equal" -> Jitter.equal();
            case "proportional" -> Jitter.proportional(factorOr(fallbackFactor, PROPORTIONAL_FACTOR));
            default -> Jitter.spread(factorOr(fallbackFactor, SPREAD_FACTOR));
        };
    }

    private double factorOr(@Nullable Double fallback, double standard) {
        if (factor != null) {
            return factor;
        }
        return fallback != null ? fallback : standard;
    }

    @Override
    public String toString() {
        return factor == null ? kind : kind + "(" + factor + ")";
    }

    /** A value as a message shows it: quoted, at most {@value #ECHO} characters, with the length when cut. */
    static String echo(String value) {
        return value.length() <= ECHO
                ? "'" + value + "'"
                : "'" + value.substring(0, ECHO) + "...' (" + value.length() + " chars)";
    }
}
