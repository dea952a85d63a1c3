package dev.stagger;

import dev.stagger.internal.Checks;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * The one place where Stagger decides what follows an attempt: whether its outcome is a success,
 * a failure to retry or a failure to give up on, how long to wait before the next attempt, and
 * when the work ends and why. {@link Retry#call}, {@link Retry#callAsync}, the job workers and
 * the HTTP client all decide through it, so they agree to the nanosecond.
 *
 * <h2>The rules, in order</h2>
 * <ol>
 *   <li>The policy's {@link Classifier} classifies the outcome. A classifier that throws a
 *       {@link RuntimeException} ends the work: its exception is attached (suppressed) to the
 *       attempt's failure, or, when a result was being classified, becomes the failure; the end
 *       reason is NOT_RETRYABLE. A classifier that returns null is treated the same way.
 *   <li>An {@link Error} or an {@link InterruptedException} is never retried, whatever the
 *       classifier says (the reason is INTERRUPTED for the latter).
 *   <li>An accepted outcome ends the work: SUCCESS on attempt 1, RECOVERED later.
 *   <li>Once {@link #maxAttempts()} attempts were made the work ends: EXHAUSTED.
 *   <li>The wait is the backoff schedule's next delay (one schedule for the whole work, so a
 *       stateful backoff keeps its state), plus a server hint: see {@link Decision} for the
 *       {@code retryAfter} rule.
 *   <li>A wait that would end at or past the policy's deadline, counted from the start of the
 *       first attempt, is not waited: the work ends at once, reason DEADLINE.
 * </ol>
 * Guards that refuse a retry for reasons outside the work (a circuit breaker, a retry budget)
 * are asked by {@link Retry} after these rules allow one.
 *
 * <h2>Work that outlives a process</h2>
 * A job row or a queue message carries its {@link RetryState} (attempt, start, backoff state)
 * from one attempt to the next, and asks {@link #decide} after each failure:
 * <pre>{@code
 * RetryEngine engine = RetryEngine.of("invoices", RetryPolicy.background());
 * RetryState state = message.hasRetryState() ? message.retryState() : engine.firstAttempt();
 * try {
 *     handle(message);
 * } catch (Exception e) {
 *     RetryEngine.Verdict verdict = engine.decide(state, null, e);
 *     if (verdict.isRetry()) {
 *         republish(message, verdict.next().orElseThrow(), verdict.delay());
 *     } else {
 *         deadLetter(message, verdict.endReason().orElseThrow(), verdict.failure());
 *     }
 * }
 * }</pre>
 * The same policy, seed and failures give the same waits and the same end as a {@link Retry}
 * running all attempts in one process. The attempt context a classifier sees here has no
 * {@link AttemptContext#lastFailure() lastFailure} (it is not carried between processes).
 *
 * <p>Immutable and thread-safe; the {@code with...} methods return changed copies.
 */
public final class RetryEngine {
    private static final EndReason[] REASONS = EndReason.values();

    final String name;
    final RetryPolicy policy;
    final Clock clock;
    final RandomSource random;
    final int maxAttempts;

    RetryEngine(String name, RetryPolicy policy, Clock clock, RandomSource random, int maxAttempts) {
        this.name = name;
        this.policy = policy;
        this.clock = clock;
        this.random = random;
        this.maxAttempts = maxAttempts;
    }

    /** An engine deciding by {@code policy} on the system clock with thread-local randomness. */
    public static RetryEngine of(String name, RetryPolicy policy) {
        Checks.notNull("policy", policy);
        return new RetryEngine(Checks.notNull("name", name), policy, Clock.system(), RandomSource.threadLocal(),
                policy.maxAttempts());
    }

    /** Time for the deadline (wall-clock milliseconds for {@link #decide}). */
    public RetryEngine withClock(Clock clock) {
        return new RetryEngine(name, policy, Checks.notNull("clock", clock), random, maxAttempts);
    }

    /** Randomness for the backoff's jitter; a seeded source makes waits reproducible. */
    public RetryEngine withRandom(RandomSource random) {
        return new RetryEngine(name, policy, clock, Checks.notNull("random", random), maxAttempts);
    }

    /** A limit other than the policy's, for work that carries its own (a job enqueued with one). */
    public RetryEngine withMaxAttempts(int maxAttempts) {
        return new RetryEngine(name, policy, clock, random, Checks.atLeast("maxAttempts", maxAttempts, 1));
    }

    /** The name a classifier reads from {@link AttemptContext#name()}. */
    public String name() {
        return name;
    }

    public RetryPolicy policy() {
        return policy;
    }

    /** Total attempts allowed: the policy's, unless {@link #withMaxAttempts(int)} set another. */
    public int maxAttempts() {
        return maxAttempts;
    }

    public Clock clock() {
        return clock;
    }

    /** The state of new work whose first attempt begins now, on this engine's clock. */
    public RetryState firstAttempt() {
        return RetryState.first(Instant.ofEpochMilli(clock.currentTimeMillis()));
    }

    /**
     * Decides what follows the attempt {@code state} describes, which returned {@code result} or
     * threw {@code failure} (exactly one is meaningful; {@code failure} is non-null when it threw).
     * The deadline is measured from {@link RetryState#startedAt()} on this engine's wall clock.
     */
    public Verdict decide(RetryState state, @Nullable Object result, @Nullable Throwable failure) {
        Checks.notNull("state", state);
        Durable work = new Durable(this, state);
        Decision decision = classify(work, result, failure);
        long next = next(work, decision);
        if (isEnd(next)) {
            return new Verdict(decision, endReason(next), 0, null, work.lastFailure);
        }
        RetryState following = new RetryState(state.attempt() + 1, state.startedAt(),
                Checks.notNull("schedule", work.schedule).state()); // next() made it for the retry
        return new Verdict(decision, null, next, following, work.lastFailure);
    }

    // ---- the rules; the in-process loops call these on their own state, allocating nothing ----

    /**
     * Classifies one attempt's outcome (rules 1 and 2) and records it as the work's last outcome.
     * The classifier sees {@code work} as its context, whose {@code lastFailure} is still the
     * previous attempt's.
     */
    Decision classify(Work work, @Nullable Object result, @Nullable Throwable failure) {
        Decision decision;
        if (failure == null && policy.acceptsAllResults()) {
            decision = Decision.accept();
        } else {
            try {
                decision = policy.classifier().classify(result, failure, work);
                if (decision == null) {
                    throw new NullPointerException("classifier returned no decision for attempt " + work.attempt);
                }
            } catch (RuntimeException classifierFailed) {
                if (failure != null) {
                    failure.addSuppressed(classifierFailed);
                } else {
                    failure = classifierFailed;
                }
                decision = Decision.stop();
            }
            if (decision.isRetry() && (failure instanceof Error || failure instanceof InterruptedException)) {
                decision = Decision.stop(); // not even a custom classifier may retry these
            }
        }
        work.lastResult = result;
        work.lastFailure = failure;
        return decision;
    }

    /**
     * Rules 3 to 6 for a classified attempt.
     *
     * @return the wait in nanoseconds before the next attempt (zero or more), or a negative code
     *     for the end reason ({@link #isEnd}, {@link #endReason})
     */
    long next(Work work, Decision decision) {
        switch (decision.kind()) {
            case ACCEPT:
                return end(work.attempt == 1 ? EndReason.SUCCESS : EndReason.RECOVERED);
            case STOP:
                return end(work.lastFailure instanceof InterruptedException ? EndReason.INTERRUPTED
                        : EndReason.NOT_RETRYABLE);
            default:
                break;
        }
        if (work.attempt >= maxAttempts) {
            return end(EndReason.EXHAUSTED);
        }
        if (work.schedule == null) {
            work.schedule = work.startSchedule();
        }
        long delay = work.schedule.nextDelayNanos(work.attempt);
        long hint = decision.minDelayNanos();
        if (hint > 0) {
            delay = hint + delay < 0 ? Long.MAX_VALUE : hint + delay; // the hint is a minimum; the backoff goes on top
        }
        long remaining = work.remainingNanos();
        if (remaining >= 0 && delay >= remaining) {
            return end(EndReason.DEADLINE);
        }
        return delay;
    }

    private static long end(EndReason reason) {
        return -1L - reason.ordinal();
    }

    static boolean isEnd(long next) {
        return next < 0;
    }

    static EndReason endReason(long next) {
        return REASONS[(int) (-1L - next)];
    }

    /**
     * One piece of work's state as the rules read and advance it, and the {@link AttemptContext}
     * its operation and classifier see. Used by one thread at a time.
     */
    abstract static class Work implements AttemptContext {
        int attempt;
        @Nullable Object lastResult;
        @Nullable Throwable lastFailure;
        /** Made by {@link RetryEngine#next} before the first retry; null until then. */
        Backoff.@Nullable Schedule schedule;

        /**
         * The engine deciding for this work. A method, not a field: an in-process call reaches it
         * through its {@code Retry}, and a million pending async calls would pay for the field.
         */
        abstract RetryEngine engine();

        /** Time since the first attempt began; read only when something needs it. */
        abstract long elapsedNanos();

        /** The backoff schedule for the first retry this work decides. */
        abstract Backoff.Schedule startSchedule();

        /**
         * Time left before the deadline, or -1 without one: the policy's, shortened to what is left
         * of the deadline of a retry this work runs inside ({@link #outerRemainingNanos()}).
         */
        final long remainingNanos() {
            long deadline = engine().policy.deadlineNanos();
            long own = deadline == 0 ? -1 : Math.max(0, deadline - Math.max(0, elapsedNanos()));
            long outer = outerRemainingNanos();
            return outer < 0 ? own : own < 0 ? outer : Math.min(own, outer);
        }

        /** What is left of the deadline of the Stagger retry this work runs inside, or -1 when none. */
        long outerRemainingNanos() {
            return -1;
        }

        /** The per-attempt timeout shortened to the remaining deadline, or -1 with neither. */
        final long attemptTimeoutNanos() {
            long timeout = engine().policy.attemptTimeoutNanos();
            long remaining = remainingNanos();
            if (timeout == 0) {
                return remaining;
            }
            return remaining >= 0 && remaining < timeout ? remaining : timeout;
        }

        @Override
        public final String name() {
            return engine().name;
        }

        @Override
        public final int attempt() {
            return attempt;
        }

        @Override
        public final int maxAttempts() {
            return engine().maxAttempts;
        }

        @Override
        public final Duration elapsed() {
            return Duration.ofNanos(Math.max(0, elapsedNanos()));
        }

        @Override
        public final Optional<Duration> remaining() {
            long remaining = remainingNanos();
            return remaining < 0 ? Optional.empty() : Optional.of(Duration.ofNanos(remaining));
        }

        @Override
        public final Optional<Duration> attemptTimeout() {
            long timeout = attemptTimeoutNanos();
            return timeout < 0 ? Optional.empty() : Optional.of(Duration.ofNanos(timeout));
        }

        @Override
        public final @Nullable Throwable lastFailure() {
            return lastFailure;
        }
    }

    /** One decision for work whose state travels with it. */
    private static final class Durable extends Work {
        private final RetryEngine engine;
        private final long startedAtMillis;
        private final long backoffState;

        Durable(RetryEngine engine, RetryState state) {
            this.engine = engine;
            this.attempt = state.attempt();
            this.startedAtMillis = state.startedAt().toEpochMilli();
            this.backoffState = state.backoffState();
        }

        @Override
        RetryEngine engine() {
            return engine;
        }

        @Override
        long elapsedNanos() {
            long millis = engine.clock.currentTimeMillis() - startedAtMillis;
            return millis > Long.MAX_VALUE / 1_000_000 ? Long.MAX_VALUE : millis * 1_000_000;
        }

        @Override
        Backoff.Schedule startSchedule() {
            return engine.policy.backoff().resume(engine.random, backoffState);
        }
    }

    /** What {@link #decide} says about one attempt. Immutable. */
    public static final class Verdict {
        private final Decision decision;
        private final @Nullable EndReason endReason;
        private final long delayNanos;
        private final @Nullable RetryState next;
        private final @Nullable Throwable failure;

        Verdict(Decision decision, @Nullable EndReason endReason, long delayNanos, @Nullable RetryState next,
                @Nullable Throwable failure) {
            this.decision = decision;
            this.endReason = endReason;
            this.delayNanos = delayNanos;
            this.next = next;
            this.failure = failure;
        }

        /** What the classifier said, after the rule that never retries an Error or an interrupt. */
        public Decision decision() {
            return decision;
        }

        /** True when the work runs again after {@link #delay()}. */
        public boolean isRetry() {
            return endReason == null;
        }

        /** Why the work ended; empty when it is retried. */
        public Optional<EndReason> endReason() {
            return Optional.ofNullable(endReason);
        }

        /** The wait before the next attempt; zero when the work ended. */
        public Duration delay() {
            return Duration.ofNanos(delayNanos);
        }

        /** The state to store with the work for its next attempt; empty when the work ended. */
        public Optional<RetryState> next() {
            return Optional.ofNullable(next);
        }

        /**
         * The attempt's failure as the caller of a {@link Retry} would receive it: with a throwing
         * classifier's exception attached, or that exception itself when a result was classified;
         * empty when the attempt returned a result and the classifier did not throw.
         */
        public Optional<Throwable> failure() {
            return Optional.ofNullable(failure);
        }

        @Override
        public String toString() {
            return endReason != null ? "Verdict{end=" + endReason + ", decision=" + decision + "}"
                    : "Verdict{retry after " + delay() + ", decision=" + decision + ", next=" + next + "}";
        }
    }
}
