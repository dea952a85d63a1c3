package dev.stagger.cli.demo;

import com.fasterxml.jackson.databind.JsonNode;
import dev.stagger.Backoff;
import dev.stagger.RandomSource;
import java.time.Duration;

/**
 * Challenge 4: how long could a call be held by N retries? Sums the real backoff's worst case
 * (before jitter) with and without the cap, and with full jitter's expected value.
 */
final class CalculatorRoute implements DemoRoute {
    record Answer(int retries, double cappedWorstSeconds, double cappedExpectedFullJitterSeconds,
                  double uncappedWorstSeconds, String uncappedHuman, String cappedHuman) {
    }

    @Override
    public Answer handle(JsonNode r) {
        int retries = Json.intField(r, "retries", 1000, 1, 100_000);
        int baseMs = Json.intField(r, "baseMs", 200, 1, 60_000);
        int capMs = Json.intField(r, "capMs", 5_000, 1, 3_600_000);
        if (capMs < baseMs) { // as the send panel: a cap below the base would make every wait the cap
            throw new IllegalArgumentException("capMs must be >= baseMs, got capMs=" + capMs + " baseMs=" + baseMs);
        }
        // without jitter a schedule is the formula as written: it draws no random number
        Backoff.Schedule capped = Backoff.exponential(Duration.ofMillis(baseMs)).maxDelay(Duration.ofMillis(capMs))
                .start(RandomSource.threadLocal());
        Backoff.Schedule uncapped = Backoff.exponential(Duration.ofMillis(baseMs)).start(RandomSource.threadLocal());
        double cappedNanos = 0;
        double uncappedNanos = 0;
        for (int k = 1; k <= retries; k++) {
            cappedNanos += capped.nextDelayNanos(k);
            uncappedNanos += uncapped.nextDelayNanos(k); // saturates at ~292 years per wait
        }
        return new Answer(retries, cappedNanos / 1e9, cappedNanos / 2e9, uncappedNanos / 1e9,
                human(uncappedNanos / 1e9), human(cappedNanos / 1e9));
    }

    static String human(double seconds) {
        if (seconds < 120) {
            return String.format("%.1f seconds", seconds);
        }
        if (seconds < 7200) {
            return String.format("%.1f minutes", seconds / 60);
        }
        if (seconds < 172_800) {
            return String.format("%.1f hours", seconds / 3600);
        }
        double years = seconds / (365.25 * 86400);
        return years < 2 ? String.format("%.1f days", seconds / 86400) : String.format("%.3g years", years);
    }
}
