package dev.stagger.internal;

import dev.stagger.Nesting;
import java.time.Duration;
import java.util.Objects;

/**
 * The checks of the settings every Stagger queue consumer has (RabbitMQ's and Kafka's builders):
 * one home, so the same setting accepts the same values with the same message in both.
 */
public final class ConsumerSettings {
    private ConsumerSettings() {
    }

    /** Handlers running at once: 1 to 10,000. */
    public static int concurrency(int concurrency) {
        if (concurrency < 1 || concurrency > 10_000) {
            throw new IllegalArgumentException("concurrency must be 1 to 10000, got " + concurrency);
        }
        return concurrency;
    }

    /** The longest wait a retry may have: at least 1 ms. */
    public static Duration maxDelay(Duration maxDelay) {
        Checks.nonNegative("maxDelay", maxDelay);
        if (maxDelay.toMillis() < 1) {
            throw new IllegalArgumentException("maxDelay must be at least 1 ms, got " + maxDelay);
        }
        return maxDelay;
    }

    /** What a consumer does with a failure a retry inside its handler decided on: DEFER or RETRY_AGAIN. */
    public static Nesting nesting(Nesting nesting) {
        Objects.requireNonNull(nesting, "nesting must not be null");
        if (nesting == Nesting.REFUSE) {
            throw new IllegalArgumentException("nesting must be DEFER or RETRY_AGAIN for a consumer, got REFUSE");
        }
        return nesting;
    }
}
