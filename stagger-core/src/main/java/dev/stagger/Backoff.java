package dev.stagger;

import dev.stagger.internal.GrpcConnectionBackoff;
import dev.stagger.internal.KubernetesBackoff;
import dev.stagger.internal.PollyDecorrelatedJitterV2;
import java.time.Duration;

/**
 * How long to wait before each retry. Immutable configuration; {@link #start(RandomSource)}
 * returns the per-call {@link Schedule}, which holds whatever state a strategy needs (decorrelated
 * jitter remembers its last delay).
 *
 * <p>Work whose attempts do not all run in one process (a job row, a queue message) carries a
 * schedule's state between attempts: {@link Schedule#state()} exports it as one {@code long}, and
 * {@link #resume(RandomSource, long)} continues from it, so the next wait is the one the same
 * schedule would have given in one process.
 *
 * <p>Retry {@code k} is the wait before attempt {@code k + 1}: retry 1 comes after the first
 * failure. Every strategy is O(1) per retry and returns a delay in {@code [0, maxDelay]} for any
 * {@code k} up to {@link Integer#MAX_VALUE}: no overflow, NaN or negative value.
 */
public interface Backoff {

    /** Begins one call's schedule, drawing randomness (if any) from {@code random}. */
    Schedule start(RandomSource random);

    /**
     * Continues a schedule whose earlier retries ran elsewhere: {@code state} is what
     * {@link Schedule#state()} returned after the last of them (0 for a schedule that has given no
     * delay yet). The default suits a stateless backoff, whose delay depends on the retry number
     * alone: it starts a new schedule. A backoff whose schedule remembers something between
     * retries overrides this and {@link Schedule#state()} together.
     */
    default Schedule resume(RandomSource random, long state) {
        return start(random);
    }

    /** The hard ceiling on every delay this backoff can produce. */
    Duration maxDelay();

    /** The per-call state of a {@link Backoff}. Not thread-safe: one call, one schedule. */
    @FunctionalInterface
    interface Schedule {
        /**
         * @param retry 1 for the wait before the second attempt, 2 before the third, ...
         * @return the wait in nanoseconds, in [0, maxDelay]
         */
        long nextDelayNanos(int retry);

        /**
         * What this schedule remembers from its earlier delays, as one value that can be stored
         * with the work (a job row, a message header) and given to {@link Backoff#resume}. Zero
         * for a schedule that remembers nothing (the default) or has given no delay yet.
         */
        default long state() {
            return 0;
        }
    }

    /** No wait at all. Suitable only with a budget or a breaker, or against local resources. */
    static Backoff none() {
        return ExponentialBackoff.NONE;
    }

    /** The same wait every time: {@code delay}; add {@code .jitter(..)} to spread it. */
    static FixedBackoff fixed(Duration delay) {
        return new FixedBackoff(delay);
    }

    /** {@code initial + step·(k-1)} for retry {@code k}. */
    static LinearBackoff linear(Duration initial, Duration step) {
        return new LinearBackoff(initial, step);
    }

    /** {@code base · multiplier^(k-1)}, multiplier 2 unless set; add {@code .maxDelay(..)} and {@code .jitter(..)}. */
    static ExponentialBackoff exponential(Duration base) {
        return new ExponentialBackoff(base);
    }

    /**
     * AWS "decorrelated jitter": {@code s = min(cap, U(base, 3·s_prev))}, {@code s_prev} starting at
     * {@code base} (Brooker, "Exponential Backoff and Jitter", 2015).
     */
    static Backoff decorrelated(Duration base, Duration cap) {
        return new DecorrelatedBackoff(base, cap);
    }

    /**
     * AWS full jitter: retry k waits {@code U(0, min(cap, base·2^(k-1)))}. The AWS SDK "standard"
     * mode uses base 100 ms and cap 20 s.
     */
    static ExponentialBackoff awsFullJitter(Duration base, Duration cap) {
        return exponential(base).multiplier(2).maxDelay(cap).jitter(Jitter.full());
    }

    /**
     * gRPC connection backoff (grpc/doc/connection-backoff.md): {@code d = min(1 s·1.6^(k-1), 120 s)},
     * then {@code d·(1 + 0.2·U(-1, 1))}. Jitter is applied after the cap, as gRPC does, so real
     * waits reach 144 s; that is this preset's hard ceiling.
     */
    static Backoff grpcConnection() {
        return GrpcConnectionBackoff.DEFAULT;
    }

    /**
     * gRPC connection backoff with explicit parameters; same formula as {@link #grpcConnection()}.
     */
    static Backoff grpcConnection(Duration initial, double multiplier, double jitter, Duration max) {
        return new GrpcConnectionBackoff(initial, multiplier, jitter, max);
    }

    /**
     * Kubernetes {@code wait.Backoff} (apimachinery), as {@code Step()} computes it: sleep
     * {@code D + U(0, jitter·D)}; then {@code D = D·factor} truncated to whole nanoseconds; if
     * {@code cap > 0} and the new {@code D > cap}, {@code D = cap} and no further steps; once
     * {@code steps} are used up, {@code D} stays where it is. Only the next duration is capped,
     * never the sleep: a first duration above the cap is slept once as given, then the cap. A
     * factor of 0 leaves {@code D} unchanged and ignores the cap. client-go's DefaultBackoff is
     * {@code (10 ms, 5.0, 0.1, 4, 0)}.
     *
     * @param cap zero for no cap
     */
    static Backoff kubernetes(Duration duration, double factor, double jitter, int steps, Duration cap) {
        return new KubernetesBackoff(duration, factor, jitter, steps, cap);
    }

    /**
     * Polly v8 "decorrelated jitter v2" (Polly.Contrib.WaitAndRetry): for retry {@code n ≥ 0},
     * {@code t = n + U(0,1)}; {@code next = 2^t · tanh(sqrt(4t))}; the delay is
     * {@code (next − prev) / 1.4 · median} and {@code prev = next}. Median waits ≈
     * {@code median·2^n}; delays are clamped to {@code maxDelay}.
     */
    static Backoff pollyDecorrelatedJitterV2(Duration median, Duration maxDelay) {
        return new PollyDecorrelatedJitterV2(median, maxDelay);
    }
}
