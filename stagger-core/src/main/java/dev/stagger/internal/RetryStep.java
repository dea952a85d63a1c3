package dev.stagger.internal;

import dev.stagger.Clock;
import dev.stagger.EndReason;
import dev.stagger.Nesting;
import dev.stagger.RandomSource;
import dev.stagger.RetryEngine;
import dev.stagger.RetryPolicy;
import dev.stagger.RetryState;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;

/**
 * What becomes of a failed delivery: retried after a delay, or dead-lettered with an end reason.
 * The decision is stagger-core's {@link RetryEngine}, the same one every {@code Retry} call and
 * every job uses; this class only translates between the engine's {@link RetryState} and what a
 * message carries in its headers (attempt, first-attempt time, backoff schedule state).
 *
 * <p>A message's retries happen in different deliveries, possibly in different processes, so the
 * backoff schedule's state travels with the message: stateful schedules (decorrelated jitter,
 * Polly v2) grow across deliveries exactly as they do within one call.
 *
 * <p>Immutable and thread-safe.
 */
public final class RetryStep {
    private final RetryEngine engine;
    private final Nesting nesting;

    /** @param nesting whether a failure a Stagger retry inside the handler decided on is retried again (RETRY_AGAIN) or not (DEFER) */
    public RetryStep(String name, RetryPolicy policy, Clock clock, RandomSource random, Nesting nesting) {
        this.engine = RetryEngine.of(name, policy).withClock(clock).withRandom(random);
        this.nesting = nesting;
    }

    /** Whether a failure a retry inside the handler decided on is dead-lettered rather than retried again. */
    public boolean defers() {
        return nesting != Nesting.RETRY_AGAIN;
    }

    /**
     * What a failed delivery carries into the decision, read from its headers.
     *
     * @param number the attempt that failed, 1 for the first delivery
     * @param firstAttemptAtMillis wall-clock time of the first attempt
     * @param backoffState the backoff schedule's state after the previous retry, 0 before the first
     */
    public record Attempt(int number, long firstAttemptAtMillis, long backoffState) {
    }

    /** The decision: exactly one of {@link Retry} and {@link DeadLetter}. */
    public sealed interface Outcome permits Retry, DeadLetter {
    }

    /**
     * Publish the message again for attempt {@code number + 1}, due after {@code delayNanos}, carrying
     * {@code backoffState}.
     */
    public record Retry(long delayNanos, long backoffState) implements Outcome {
    }

    /** Send the message to the dead-letter queue, ended for {@code reason}. */
    public record DeadLetter(EndReason reason) implements Outcome {
    }

    public int maxAttempts() {
        return engine.maxAttempts();
    }

    /** The policy's deadline, counted from a message's first attempt. */
    public Optional<Duration> deadline() {
        return engine.policy().deadline();
    }

    /**
     * Decides what becomes of a delivery whose handler threw {@code failure}; the deadline runs from
     * the first attempt's wall-clock time, read against this step's clock. A classifier that throws
     * has its exception attached to {@code failure} as suppressed.
     */
    public Outcome afterFailure(Throwable failure, Attempt attempt) {
        RetryState state = new RetryState(attempt.number(), Instant.ofEpochMilli(attempt.firstAttemptAtMillis()),
                attempt.backoffState());
        RetryEngine.Verdict verdict = engine.decide(state, null, failure);
        if (verdict.isRetry()) {
            return new Retry(verdict.delay().toNanos(), verdict.next().orElseThrow().backoffState());
        }
        return new DeadLetter(verdict.endReason().orElseThrow());
    }
}
