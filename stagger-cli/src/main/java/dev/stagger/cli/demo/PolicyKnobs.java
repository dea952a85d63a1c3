package dev.stagger.cli.demo;

import com.fasterxml.jackson.databind.JsonNode;
import dev.stagger.Backoff;
import dev.stagger.BackoffSpec;
import dev.stagger.RandomSource;
import dev.stagger.RetryPolicy;
import java.time.Duration;
import java.util.function.IntToLongFunction;

/**
 * The policy knobs the page sends: attempts, base, cap, jitter, deadline. The jitter names are
 * stagger-core's ({@link BackoffSpec#withJitter(String)}), as on the command line and in the
 * Spring properties.
 */
record PolicyKnobs(int maxAttempts, int baseMs, int capMs, BackoffSpec spec, int deadlineMs) {

    static PolicyKnobs from(JsonNode r) {
        int base = Json.intField(r, "baseMs", 200, 1, 10_000);
        int cap = Json.intField(r, "capMs", 5_000, 1, 120_000);
        if (cap < base) {
            throw new IllegalArgumentException("capMs must be >= baseMs, got capMs=" + cap + " baseMs=" + base);
        }
        BackoffSpec spec = BackoffSpec.defaults().withBase(Duration.ofMillis(base)).withMaxDelay(Duration.ofMillis(cap));
        String jitter = Json.text(r, "jitter", "");
        if (!jitter.isBlank()) {
            spec = spec.withJitter(jitter); // its refusal names the field "jitter" and the value
        }
        return new PolicyKnobs(Json.intField(r, "maxAttempts", 5, 1, 20), base, cap, spec,
                Json.intField(r, "deadlineMs", 15_000, 100, 120_000));
    }

    Backoff backoff() {
        return spec.toBackoff();
    }

    /**
     * The delay of retry k before jitter, or -1 for decorrelated jitter, whose random walk has no
     * un-jittered delay to compare with.
     */
    IntToLongFunction rawDelayNanos() {
        if (spec.type().equals("decorrelated")) {
            return retry -> -1;
        }
        // without jitter the schedule is the formula as written: it draws no random number
        return spec.withJitter("none").toBackoff().start(RandomSource.threadLocal())::nextDelayNanos;
    }

    RetryPolicy.Builder policy() {
        return RetryPolicy.builder().maxAttempts(maxAttempts).backoff(backoff()).deadline(Duration.ofMillis(deadlineMs));
    }
}
