package dev.stagger;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

/** Bad configuration fails when it is built, with a message naming the field and the value. */
class ConfigValidationTest {
    private static final Duration NEGATIVE = Duration.ofMillis(-1);

    private static void rejects(Executable build, String... messageParts) {
        assertThatThrownBy(build::execute).isInstanceOf(IllegalArgumentException.class).hasMessageContainingAll(messageParts);
    }

    private static void rejectsNull(Executable build, String parameter) {
        assertThatThrownBy(build::execute).isInstanceOf(NullPointerException.class)
                .hasMessage(parameter + " must not be null");
    }

    @Test
    void maxAttemptsBelowOne() {
        rejects(() -> RetryPolicy.builder().maxAttempts(0), "maxAttempts", "0");
        rejects(() -> RetryPolicy.builder().maxAttempts(-3), "maxAttempts", "-3");
    }

    @Test
    void negativeMaxRetries() {
        rejects(() -> RetryPolicy.builder().maxRetries(-1), "maxRetries", "-1");
    }

    @Test
    void maxRetriesThatWouldOverflowMaxAttempts() {
        rejects(() -> RetryPolicy.builder().maxRetries(Integer.MAX_VALUE), "maxRetries", String.valueOf(Integer.MAX_VALUE));
    }

    @Test
    void zeroOrNegativeDeadline() {
        rejects(() -> RetryPolicy.builder().deadline(Duration.ZERO), "deadline", "PT0S");
        rejects(() -> RetryPolicy.builder().deadline(NEGATIVE), "deadline", "PT-0.001S");
    }

    @Test
    void zeroOrNegativeAttemptTimeout() {
        rejects(() -> RetryPolicy.builder().attemptTimeout(Duration.ZERO), "attemptTimeout", "PT0S");
        rejects(() -> RetryPolicy.builder().attemptTimeout(NEGATIVE), "attemptTimeout", "PT-0.001S");
    }

    @Test
    void nullBackoffOrClassifier() {
        rejectsNull(() -> RetryPolicy.builder().backoff(null), "backoff");
        rejectsNull(() -> RetryPolicy.builder().classifier(null), "classifier");
    }

    @Test
    void zeroOrNegativeExponentialBase() {
        rejects(() -> Backoff.exponential(Duration.ZERO), "base", "PT0S");
        rejects(() -> Backoff.exponential(NEGATIVE), "base", "PT-0.001S");
    }

    @Test
    void zeroOrNegativeFixedDelay() {
        rejects(() -> Backoff.fixed(Duration.ZERO), "delay", "PT0S");
        rejects(() -> Backoff.fixed(NEGATIVE), "delay", "PT-0.001S");
    }

    @Test
    void zeroOrNegativeMaxDelay() {
        rejects(() -> Backoff.exponential(Duration.ofMillis(1)).maxDelay(Duration.ZERO), "maxDelay", "PT0S");
        rejects(() -> Backoff.linear(Duration.ofMillis(1), Duration.ZERO).maxDelay(NEGATIVE), "maxDelay", "PT-0.001S");
    }

    @Test
    void multiplierBelowOneOrNotANumber() {
        rejects(() -> Backoff.exponential(Duration.ofMillis(1)).multiplier(0.5), "multiplier", "0.5");
        rejects(() -> Backoff.exponential(Duration.ofMillis(1)).multiplier(Double.NaN), "multiplier", "NaN");
        rejects(() -> Backoff.exponential(Duration.ofMillis(1)).multiplier(Double.POSITIVE_INFINITY), "multiplier", "Infinity");
    }

    @Test
    void linearWithZeroInitialOrNegativeStep() {
        rejects(() -> Backoff.linear(Duration.ZERO, Duration.ofMillis(1)), "initial", "PT0S");
        rejects(() -> Backoff.linear(Duration.ofMillis(1), NEGATIVE), "step", "PT-0.001S");
    }

    @Test
    void jitterFactorOutsideZeroToOneOrNotANumber() {
        rejects(() -> Jitter.proportional(1.5), "jitter factor", "1.5");
        rejects(() -> Jitter.proportional(-0.1), "jitter factor", "-0.1");
        rejects(() -> Jitter.spread(2), "jitter factor", "2.0");
        rejects(() -> Jitter.spread(Double.NaN), "jitter factor", "NaN");
    }

    @Test
    void decorrelatedCapBelowBase() {
        rejects(() -> Backoff.decorrelated(Duration.ofSeconds(2), Duration.ofSeconds(1)), "cap", "PT1S", "PT2S");
        rejects(() -> Backoff.decorrelated(Duration.ZERO, Duration.ofSeconds(1)), "base", "PT0S");
    }

    @Test
    void grpcPresetParameters() {
        rejects(() -> Backoff.grpcConnection(Duration.ZERO, 1.6, 0.2, Duration.ofSeconds(120)), "initial", "PT0S");
        rejects(() -> Backoff.grpcConnection(Duration.ofSeconds(1), 0.9, 0.2, Duration.ofSeconds(120)), "multiplier", "0.9");
        rejects(() -> Backoff.grpcConnection(Duration.ofSeconds(1), 1.6, 1.2, Duration.ofSeconds(120)), "jitter", "1.2");
        rejects(() -> Backoff.grpcConnection(Duration.ofSeconds(1), 1.6, 0.2, NEGATIVE), "max", "PT-0.001S");
    }

    @Test
    void kubernetesPresetParameters() {
        rejects(() -> Backoff.kubernetes(Duration.ZERO, 5, 0.1, 4, Duration.ZERO), "duration", "PT0S");
        rejects(() -> Backoff.kubernetes(Duration.ofMillis(10), Double.NaN, 0.1, 4, Duration.ZERO), "factor", "NaN");
        rejects(() -> Backoff.kubernetes(Duration.ofMillis(10), 5, -0.1, 4, Duration.ZERO), "jitter", "-0.1");
        rejects(() -> Backoff.kubernetes(Duration.ofMillis(10), 5, 0.1, -1, Duration.ZERO), "steps", "-1");
        rejects(() -> Backoff.kubernetes(Duration.ofMillis(10), 5, 0.1, 4, NEGATIVE), "cap", "PT-0.001S");
    }

    @Test
    void pollyPresetParameters() {
        rejects(() -> Backoff.pollyDecorrelatedJitterV2(Duration.ZERO, Duration.ofSeconds(1)), "median", "PT0S");
        rejects(() -> Backoff.pollyDecorrelatedJitterV2(Duration.ofSeconds(1), NEGATIVE), "maxDelay", "PT-0.001S");
    }

    @Test
    void negativeRetryAfterHint() {
        rejects(() -> Decision.retryAfter(Duration.ofSeconds(-5)), "retryAfter", "PT-5S");
    }

    @Test
    void randomSequenceValuesOutsideTheUnitInterval() {
        rejects(() -> RandomSource.sequence(1.0), "values", "1.0");
        rejects(() -> RandomSource.sequence(Double.NaN), "values", "NaN");
        rejects(RandomSource::sequence, "values");
    }

    @Test
    void retryWithoutNameOrPolicy() {
        rejectsNull(() -> Retry.of(null, RetryPolicy.interactive()), "name");
        rejectsNull(() -> Retry.of("x", null), "policy");
    }

    @Test
    void circuitBreakerSettings() {
        rejects(() -> CircuitBreaker.builder("b").failureRateThreshold(0), "failureRateThreshold", "0.0");
        rejects(() -> CircuitBreaker.builder("b").failureRateThreshold(1.5), "failureRateThreshold", "1.5");
        rejects(() -> CircuitBreaker.builder("b").failureRateThreshold(Double.NaN), "failureRateThreshold", "NaN");
        rejects(() -> CircuitBreaker.builder("b").minimumCalls(0), "minimumCalls", "0");
        rejects(() -> CircuitBreaker.builder("b").consecutiveFailures(0), "consecutiveFailures", "0");
        rejects(() -> CircuitBreaker.builder("b").window(Duration.ZERO), "window", "PT0S");
        rejects(() -> CircuitBreaker.builder("b").buckets(0), "buckets", "0");
        rejects(() -> CircuitBreaker.builder("b").buckets(1001), "buckets", "1001");
        rejects(() -> CircuitBreaker.builder("b").openDuration(NEGATIVE), "openDuration", "PT-0.001S");
        rejects(() -> CircuitBreaker.builder("b").halfOpenPermits(0), "halfOpenPermits", "0");
        rejects(() -> CircuitBreaker.builder("b").slowCallThreshold(Duration.ZERO), "slowCallThreshold", "PT0S");
    }

    @Test
    void retryBudgetSettings() {
        rejects(() -> RetryBudget.builder("b").ratio(0), "ratio", "0.0");
        rejects(() -> RetryBudget.builder("b").ratio(1.5), "ratio", "1.5");
        rejects(() -> RetryBudget.builder("b").ratio(Double.NaN), "ratio", "NaN");
        rejects(() -> RetryBudget.builder("b").ratio(0.0001), "ratio", "1.0E-4");
        rejects(() -> RetryBudget.builder("b").maxTokens(0.5), "maxTokens", "0.5");
        rejects(() -> RetryBudget.builder("b").maxTokens(Double.NaN), "maxTokens", "NaN");
        rejects(() -> RetryBudget.builder("b").minRetriesPerSecond(-1), "minRetriesPerSecond", "-1");
    }
}
