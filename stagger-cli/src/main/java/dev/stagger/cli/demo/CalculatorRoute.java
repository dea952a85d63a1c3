package dev.stagger.cli.demo;

import com.fasterxml.jackson.databind.JsonNode;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.math.MathContext;
import java.util.Locale;

/**
 * Challenge 4: how long could a call be held by N retries? The worst case before jitter, summed
 * exactly: with a cap, waits grow base, 2·base, 4·base, ... up to the cap and stay there; without
 * one, the sum is base·(2^N − 1), which passes the age of the universe long before N = 100,000
 * (a running sum of {@code long} nanoseconds would stop growing at 292 years per wait).
 */
final class CalculatorRoute implements DemoRoute {
    /** 13.8 billion years, in milliseconds: past this the page says so instead of a number. */
    static final BigInteger AGE_OF_THE_UNIVERSE_MS = new BigDecimal("13.8e9").multiply(BigDecimal.valueOf(31_557_600_000L))
            .toBigInteger();
    private static final double YEAR_SECONDS = 365.25 * 86_400;

    record Answer(int retries, String cappedHuman, String uncappedHuman, boolean uncappedBeyondUniverse) {
    }

    @Override
    public Answer handle(JsonNode r) {
        int retries = Json.intField(r, "retries", 1000, 1, 100_000);
        int baseMs = Json.intField(r, "baseMs", 200, 1, 60_000);
        int capMs = Json.intField(r, "capMs", 5_000, 1, 3_600_000);
        if (capMs < baseMs) { // as the send panel: a cap below the base would make every wait the cap
            throw new IllegalArgumentException("capMs must be >= baseMs, got capMs=" + capMs + " baseMs=" + baseMs);
        }
        BigInteger uncapped = uncappedMs(retries, baseMs);
        return new Answer(retries, human(cappedMs(retries, baseMs, capMs)), human(uncapped),
                uncapped.compareTo(AGE_OF_THE_UNIVERSE_MS) > 0);
    }

    /** base + 2·base + ... while below the cap, then the cap for every remaining retry. */
    static BigInteger cappedMs(int retries, long baseMs, long capMs) {
        BigInteger sum = BigInteger.ZERO;
        long wait = baseMs;
        int k = 0;
        for (; k < retries && wait < capMs; k++, wait *= 2) {
            sum = sum.add(BigInteger.valueOf(wait));
        }
        return sum.add(BigInteger.valueOf(capMs).multiply(BigInteger.valueOf(retries - k)));
    }

    /** base·(2^retries − 1): every wait twice the one before, none capped. */
    static BigInteger uncappedMs(int retries, long baseMs) {
        return BigInteger.ONE.shiftLeft(retries).subtract(BigInteger.ONE).multiply(BigInteger.valueOf(baseMs));
    }

    /** "100 ms", "1.7 minutes", "36.5 million years", or "more than the age of the universe (13.8 billion years)". */
    static String human(BigInteger ms) {
        if (ms.compareTo(AGE_OF_THE_UNIVERSE_MS) > 0) {
            return "more than the age of the universe (13.8 billion years)";
        }
        double millis = new BigDecimal(ms).round(MathContext.DECIMAL64).doubleValue();
        double seconds = millis / 1000;
        if (millis < 1000) {
            return format("%.0f ms", millis);
        }
        if (seconds < 120) {
            return format("%.1f seconds", seconds);
        }
        if (seconds < 7200) {
            return format("%.1f minutes", seconds / 60);
        }
        if (seconds < 172_800) {
            return format("%.1f hours", seconds / 3600);
        }
        double years = seconds / YEAR_SECONDS;
        if (years < 2) {
            return format("%.1f days", seconds / 86_400);
        }
        if (years < 1e6) {
            return format("%,.0f years", years);
        }
        if (years < 1e9) {
            return format("%.1f million years", years / 1e6);
        }
        return format("%.1f billion years", years / 1e9);
    }

    private static String format(String pattern, double value) {
        return String.format(Locale.ROOT, pattern, value);
    }
}
