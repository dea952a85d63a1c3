package dev.stagger;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.junit.jupiter.api.Test;

/** The two safe-default profiles, with the numbers the documentation promises. */
class RetryPolicyProfilesTest {

    @Test
    void interactiveIsFiveAttemptsFrom200MillisDoublingTo5SecondsWithin15Seconds() {
        RetryPolicy interactive = RetryPolicy.interactive();
        ExponentialBackoff backoff = (ExponentialBackoff) interactive.backoff();

        assertThat(interactive.maxAttempts()).isEqualTo(5);
        assertThat(backoff.base()).isEqualTo(Duration.ofMillis(200));
        assertThat(backoff.multiplier()).isEqualTo(2.0);
        assertThat(backoff.maxDelay()).isEqualTo(Duration.ofSeconds(5));
        assertThat(backoff.jitter()).isSameAs(Jitter.full());
        assertThat(interactive.deadline()).contains(Duration.ofSeconds(15));
        assertThat(interactive.attemptTimeout()).isEmpty();
    }

    @Test
    void backgroundIsEightAttemptsFromOneSecondDoublingTo60SecondsWithin10Minutes() {
        RetryPolicy background = RetryPolicy.background();
        ExponentialBackoff backoff = (ExponentialBackoff) background.backoff();

        assertThat(background.maxAttempts()).isEqualTo(8);
        assertThat(backoff.base()).isEqualTo(Duration.ofSeconds(1));
        assertThat(backoff.multiplier()).isEqualTo(2.0);
        assertThat(backoff.maxDelay()).isEqualTo(Duration.ofSeconds(60));
        assertThat(backoff.jitter()).isSameAs(Jitter.full());
        assertThat(background.deadline()).contains(Duration.ofMinutes(10));
    }

    @Test
    void interactiveWaitsBeforeJitterAre200_400_800_1600() {
        ExponentialBackoff backoff = (ExponentialBackoff) RetryPolicy.interactive().backoff();

        assertThat(backoff.rawDelayNanos(1)).isEqualTo(Duration.ofMillis(200).toNanos());
        assertThat(backoff.rawDelayNanos(4)).isEqualTo(Duration.ofMillis(1600).toNanos());
    }

    @Test
    void backgroundWaitsBeforeJitterReachTheCapAtTheSeventhRetry() {
        ExponentialBackoff backoff = (ExponentialBackoff) RetryPolicy.background().backoff();

        assertThat(backoff.rawDelayNanos(6)).isEqualTo(Duration.ofSeconds(32).toNanos());
        assertThat(backoff.rawDelayNanos(7)).isEqualTo(Duration.ofSeconds(60).toNanos());
    }

    @Test
    void aPolicyBuiltWithNothingSetRetriesThreeTimesWithTheDefaultBackoffAndNoDeadline() {
        RetryPolicy policy = RetryPolicy.builder().build();

        assertThat(policy.maxAttempts()).isEqualTo(3);
        assertThat(policy.backoff()).isSameAs(RetryPolicy.DEFAULT_BACKOFF);
        assertThat(policy.deadline()).isEmpty();
    }
}
