package dev.stagger.cli.demo;

import com.fasterxml.jackson.databind.JsonNode;
import dev.stagger.Backoff;
import dev.stagger.ExponentialBackoff;
import dev.stagger.Jitter;
import dev.stagger.RandomSource;
import dev.stagger.RetryPolicy;
import java.time.Duration;
import java.util.function.IntToLongFunction;

/** The policy knobs the page sends: attempts, base, cap, jitter kind, deadline. */
record PolicyKnobs(int maxAttempts, int baseMs, int capMs, String jitter, int deadlineMs) {

    static PolicyKnobs from(JsonNode r) {
        int base = Json.intField(r, "baseMs", 200, 1, 10_000);
        int cap = Json.intField(r, "capMs", 5_000, 1, 120_000);
        if (cap < base) {
            throw new IllegalArgumentException("capMs must be >= baseMs, got capMs=" + cap + " baseMs=" + base);
        }
        return new PolicyKnobs(Json.intField(r, "maxAttempts", 5, 1, 20), base, cap,
                Json.choice(r, "jitter", "full", "none", "full", "equal", "proportional", "decorrelated"),
                Json.intField(r, "deadlineMs", 15_000, 100, 120_000));
    }

    Backoff backoff() {
        if (jitter.equals("decorrelated")) {
            return Backoff.decorrelated(Duration.ofMillis(baseMs), Duration.ofMillis(capMs));
        }
        return exponential().jitter(switch (jitter) {
            case "full" -> Jitter.full();
            case "equal" -> Jitter.equal();
            case "proportional" -> Jitter.proportional(0.3);
            default -> Jitter.none();
        });
    }

    private ExponentialBackoff exponential() {
        return Backoff.exponential(Duration.ofMillis(baseMs)).maxDelay(Duration.ofMillis(capMs));
    }

    /**
     * The delay of retry k before jitter, or -1 for decorrelated jitter, whose random walk has no
     * un-jittered delay to compare with.
     */
    IntToLongFunction rawDelayNanos() {
        if (jitter.equals("decorrelated")) {
            return retry -> -1;
        }
        // without jitter the schedule is the formula as written: it draws no random number
        return exponential().start(RandomSource.threadLocal())::nextDelayNanos;
    }

    RetryPolicy.Builder policy() {
        return RetryPolicy.builder().maxAttempts(maxAttempts).backoff(backoff()).deadline(Duration.ofMillis(deadlineMs));
    }
}
