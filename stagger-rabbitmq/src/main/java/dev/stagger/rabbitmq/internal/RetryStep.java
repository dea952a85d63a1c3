package dev.stagger.rabbitmq.internal;

import dev.stagger.AttemptContext;
import dev.stagger.Backoff;
import dev.stagger.Decision;
import dev.stagger.EndReason;
import dev.stagger.RandomSource;
import dev.stagger.RetryPolicy;
import java.time.Duration;
import java.util.Optional;

/**
 * The one place in this module that decides what becomes of a failed delivery: retried after a
 * delay, or dead-lettered with an end reason. It applies the same rules as a {@code Retry} call in
 * stagger-core: the policy's classifier decides; an {@link Error} or an
 * {@link InterruptedException} is never retried, whatever the classifier says; a classifier that
 * throws ends the message as not retryable (its exception attached to the failure as suppressed);
 * the last allowed attempt ends EXHAUSTED; a {@link Decision#retryAfter(Duration) retryAfter} hint
 * is a minimum with the backoff's jittered delay on top; a delay that would end past the policy's
 * deadline, measured from the message's first attempt, ends it with DEADLINE.
 *
 * <p>A message's retries happen in different deliveries, possibly in different processes, so the
 * backoff schedule's state travels with the message: the schedule draws its randomness from a
 * seed carried in a header, and retry {@code k} replays the schedule's first {@code k} steps from
 * that seed. Stateful schedules (decorrelated jitter, Polly v2) thus grow across deliveries exactly
 * as they do within one call, for the same random numbers. Replaying costs {@code k} steps, and
 * {@code k} is at most the policy's attempt limit.
 *
 * <p>Immutable and thread-safe.
 */
public final class RetryStep {
    private final String name;
    private final RetryPolicy policy;

    public RetryStep(String name, RetryPolicy policy) {
        this.name = name;
        this.policy = policy;
    }

    /**
     * What a failed delivery carries into the decision, read from its headers.
     *
     * @param number the attempt that failed, 1 for the first delivery
     * @param firstAttemptAtMillis wall-clock time of the first attempt
     * @param backoffSeed the seed of this message's backoff schedule
     */
    public record Attempt(int number, long firstAttemptAtMillis, long backoffSeed) {
    }

    /** The decision: exactly one of {@link Retry} and {@link DeadLetter}. */
    public sealed interface Outcome permits Retry, DeadLetter {
    }

    /** Publish the message again for attempt {@code number + 1}, due after {@code delayNanos}. */
    public record Retry(long delayNanos) implements Outcome {
    }

    /** Send the message to the dead-letter queue, ended for {@code reason}. */
    public record DeadLetter(EndReason reason) implements Outcome {
    }

    public int maxAttempts() {
        return policy.maxAttempts();
    }

    /**
     * Decides what becomes of a delivery whose handler threw {@code failure}.
     *
     * @param nowMillis wall-clock time now (the deadline runs from the first attempt's wall-clock time)
     */
    public Outcome afterFailure(Throwable failure, Attempt attempt, long nowMillis) {
        Context context = new Context(attempt, nowMillis, failure);
        Decision decision;
        try {
            decision = policy.classifier().classify(null, failure, context);
        } catch (RuntimeException classifierFailed) {
            failure.addSuppressed(classifierFailed);
            decision = Decision.stop();
        }
        if (decision == null) {
            decision = Decision.stop();
        }
        if (decision.isRetry() && (failure instanceof Error || failure instanceof InterruptedException)) {
            decision = Decision.stop(); // not even a custom classifier may retry these
        }
        if (!decision.isRetry()) {
            return new DeadLetter(failure instanceof InterruptedException ? EndReason.INTERRUPTED : EndReason.NOT_RETRYABLE);
        }
        if (attempt.number() >= policy.maxAttempts()) {
            return new DeadLetter(EndReason.EXHAUSTED);
        }
        long delay = backoffDelayNanos(attempt);
        long hint = decision.minDelayNanos();
        if (hint > 0) {
            delay = hint + delay < 0 ? Long.MAX_VALUE : hint + delay; // the hint is a minimum; jitter goes on top
        }
        Optional<Duration> deadline = policy.deadline();
        if (deadline.isPresent() && delay >= deadline.get().toNanos() - context.elapsedNanos()) {
            return new DeadLetter(EndReason.DEADLINE);
        }
        return new Retry(delay);
    }

    /** Retry {@code attempt.number()}'s wait, the schedule replayed from the message's seed. */
    private long backoffDelayNanos(Attempt attempt) {
        Backoff.Schedule schedule = policy.backoff().start(RandomSource.seeded(attempt.backoffSeed()));
        long delay = 0;
        for (int retry = 1; retry <= attempt.number(); retry++) {
            delay = schedule.nextDelayNanos(retry);
        }
        return delay;
    }

    /** The attempt as the policy's classifier sees it. */
    private final class Context implements AttemptContext {
        private final Attempt attempt;
        private final long nowMillis;
        private final Throwable failure;

        Context(Attempt attempt, long nowMillis, Throwable failure) {
            this.attempt = attempt;
            this.nowMillis = nowMillis;
            this.failure = failure;
        }

        long elapsedNanos() {
            return Math.max(0, nowMillis - attempt.firstAttemptAtMillis()) * 1_000_000L;
        }

        @Override
        public String name() {
            return name;
        }

        @Override
        public int attempt() {
            return attempt.number();
        }

        @Override
        public int maxAttempts() {
            return policy.maxAttempts();
        }

        @Override
        public Duration elapsed() {
            return Duration.ofNanos(elapsedNanos());
        }

        @Override
        public Optional<Duration> remaining() {
            return policy.deadline().map(d -> {
                Duration left = d.minus(elapsed());
                return left.isNegative() ? Duration.ZERO : left;
            });
        }

        @Override
        public Optional<Duration> attemptTimeout() {
            Optional<Duration> remaining = remaining();
            Optional<Duration> timeout = policy.attemptTimeout();
            if (timeout.isEmpty()) {
                return remaining;
            }
            return Optional.of(remaining.isPresent() && remaining.get().compareTo(timeout.get()) < 0
                    ? remaining.get() : timeout.get());
        }

        @Override
        public Throwable lastFailure() {
            return attempt.number() <= 1 ? null : failure;
        }
    }
}
