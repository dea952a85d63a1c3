package dev.stagger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import dev.stagger.testing.VirtualClock;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** What an operation can learn about the attempt it is running in. */
class AttemptContextTest {
    private final VirtualClock clock = new VirtualClock();

    private Retry retry(RetryPolicy.Builder policy) {
        return Retry.of("context", policy.build()).withClock(clock);
    }

    @Test
    void attemptsAreNumberedFromOneAndKnowTheMaximum() {
        List<Integer> attempts = new ArrayList<>();
        List<Integer> maxima = new ArrayList<>();

        catchThrowable(() -> retry(RetryPolicy.builder().maxAttempts(3).backoff(Backoff.none())).call(context -> {
            attempts.add(context.attempt());
            maxima.add(context.maxAttempts());
            throw new IOException();
        }));

        assertThat(attempts).containsExactly(1, 2, 3);
        assertThat(maxima).containsOnly(3);
    }

    @Test
    void remainingCountsDownTheDeadlineAcrossAttemptsAndWaits() throws Exception {
        List<Optional<Duration>> remaining = new ArrayList<>();
        RetryPolicy.Builder policy = RetryPolicy.builder().maxAttempts(4).backoff(Backoff.fixed(Duration.ofSeconds(1)))
                .deadline(Duration.ofSeconds(10));

        retry(policy).call(context -> {
            remaining.add(context.remaining());
            clock.advance(Duration.ofMillis(500));
            if (context.attempt() < 3) {
                throw new IOException();
            }
            return "ok";
        });

        assertThat(remaining).containsExactly(Optional.of(Duration.ofSeconds(10)), Optional.of(Duration.ofMillis(8500)),
                Optional.of(Duration.ofSeconds(7)));
    }

    @Test
    void remainingIsEmptyWithoutADeadline() throws Exception {
        Optional<Duration> remaining = retry(RetryPolicy.builder()).call(AttemptContext::remaining);

        assertThat(remaining).isEmpty();
    }

    @Test
    void elapsedIncludesEarlierAttemptsAndWaits() throws Exception {
        List<Duration> elapsed = new ArrayList<>();

        retry(RetryPolicy.builder().maxAttempts(3).backoff(Backoff.fixed(Duration.ofSeconds(2)))).call(context -> {
            elapsed.add(context.elapsed());
            if (context.attempt() < 3) {
                throw new IOException();
            }
            return "ok";
        });

        assertThat(elapsed).containsExactly(Duration.ZERO, Duration.ofSeconds(2), Duration.ofSeconds(4));
    }

    @Test
    void attemptTimeoutIsShortenedToTheRemainingDeadline() throws Exception {
        List<Optional<Duration>> timeouts = new ArrayList<>();
        RetryPolicy.Builder policy = RetryPolicy.builder().maxAttempts(3).backoff(Backoff.fixed(Duration.ofSeconds(1)))
                .deadline(Duration.ofSeconds(6)).attemptTimeout(Duration.ofSeconds(3));

        retry(policy).call(context -> {
            timeouts.add(context.attemptTimeout());
            clock.advance(Duration.ofMillis(1500));
            if (context.attempt() < 3) {
                throw new IOException();
            }
            return "ok";
        });

        // remaining before each attempt: 6 s, 3.5 s, then 6 − 2 × (1.5 + 1) = 1 s
        assertThat(timeouts).containsExactly(Optional.of(Duration.ofSeconds(3)), Optional.of(Duration.ofSeconds(3)),
                Optional.of(Duration.ofSeconds(1)));
    }

    @Test
    void lastFailureIsThePreviousAttemptsFailure() throws Exception {
        List<Throwable> seen = new ArrayList<>();
        IOException first = new IOException("first");

        retry(RetryPolicy.builder().maxAttempts(2).backoff(Backoff.none())).call(context -> {
            seen.add(context.lastFailure());
            if (context.attempt() == 1) {
                throw first;
            }
            return "ok";
        });

        assertThat(seen).containsExactly(null, first);
    }

    @Test
    void theClassifierSeesTheAttemptThatJustEnded() {
        List<Integer> classified = new ArrayList<>();
        RetryPolicy.Builder policy = RetryPolicy.builder().maxAttempts(3).backoff(Backoff.none())
                .classifier((r, f, context) -> {
                    classified.add(context.attempt());
                    return Decision.retry();
                });

        catchThrowable(() -> retry(policy).call(() -> {
            throw new IOException();
        }));

        assertThat(classified).containsExactly(1, 2, 3);
    }

    @Test
    void theContextNamesTheRetry() throws Exception {
        assertThat(retry(RetryPolicy.builder()).call(AttemptContext::name)).isEqualTo("context");
    }

    @Test
    void aCustomClassifierSeesTheTimeElapsedSinceTheCallBegan() {
        VirtualClock late = new VirtualClock(Duration.ofHours(5).toNanos()); // time does not start at zero
        List<Duration> elapsed = new ArrayList<>();
        RetryPolicy policy = RetryPolicy.builder().maxAttempts(2).backoff(Backoff.fixed(Duration.ofSeconds(1)))
                .classifier((r, f, context) -> {
                    elapsed.add(context.elapsed());
                    return Decision.retry();
                }).build();

        catchThrowable(() -> Retry.of("late", policy).withClock(late).call(() -> {
            throw new IOException();
        }));

        assertThat(elapsed).containsExactly(Duration.ZERO, Duration.ofSeconds(1));
    }

    @Test
    void duringClassificationLastFailureIsStillThePreviousAttemptsFailure() {
        List<Throwable> seen = new ArrayList<>();
        IOException first = new IOException("first");
        IOException second = new IOException("second");
        IOException third = new IOException("third");
        IOException[] failures = {first, second, third};
        RetryPolicy.Builder policy = RetryPolicy.builder().maxAttempts(3).backoff(Backoff.none())
                .classifier((r, f, context) -> {
                    seen.add(context.lastFailure());
                    return Decision.retry();
                });

        catchThrowable(() -> retry(policy).call(context -> {
            throw failures[context.attempt() - 1];
        }));

        // the outcome being classified is the classifier's own argument; the context keeps the one before
        assertThat(seen).containsExactly(null, first, second);
    }
}
