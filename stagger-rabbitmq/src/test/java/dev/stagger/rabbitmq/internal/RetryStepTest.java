package dev.stagger.rabbitmq.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.stagger.Backoff;
import dev.stagger.Decision;
import dev.stagger.EndReason;
import dev.stagger.RandomSource;
import dev.stagger.Retry;
import dev.stagger.RetryEvent;
import dev.stagger.RetryListener;
import dev.stagger.RetryPolicy;
import dev.stagger.testing.VirtualClock;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class RetryStepTest {
    private static final long T0 = 1_700_000_000_000L;

    @Test
    void waitsAsTheCoreRetryDoesForTheSameSeedAcrossDeliveries() throws Exception {
        // decorrelated jitter keeps state from one wait to the next: replayed from the header's seed,
        // each delivery's wait must equal the core call's wait for the same random numbers
        RetryPolicy policy = RetryPolicy.builder().maxAttempts(6)
                .backoff(Backoff.decorrelated(Duration.ofMillis(100), Duration.ofSeconds(30))).build();
        long seed = 42;
        List<Long> core = new ArrayList<>();
        Retry retry = Retry.of("core", policy).withRandom(RandomSource.seeded(seed)).withClock(new VirtualClock())
                .withListener(new RetryListener() {
                    @Override
                    public void onRetryScheduled(RetryEvent.RetryScheduled e) {
                        core.add(e.delay().toNanos());
                    }
                });
        try {
            retry.call(() -> {
                throw new IOException("down");
            });
        } catch (IOException expected) {
            // exhausted
        }
        RetryStep step = new RetryStep("orders", policy);
        List<Long> consumer = new ArrayList<>();
        for (int attempt = 1; attempt < 6; attempt++) {
            RetryStep.Outcome o = step.afterFailure(new IOException("down"), new RetryStep.Attempt(attempt, T0, seed), T0);
            consumer.add(((RetryStep.Retry) o).delayNanos());
        }
        assertThat(consumer).hasSize(5).isEqualTo(core);
        assertThat(consumer).doesNotHaveDuplicates(); // not a fresh schedule's first wait again and again
    }

    @Test
    void deadLettersThePermanentFailureAsNotRetryable() {
        RetryStep step = new RetryStep("q", RetryPolicy.builder().abortOn(IllegalArgumentException.class).build());
        assertThat(step.afterFailure(new IllegalArgumentException("bad"), new RetryStep.Attempt(1, T0, 1), T0))
                .isEqualTo(new RetryStep.DeadLetter(EndReason.NOT_RETRYABLE));
    }

    @Test
    void neverRetriesAnErrorWhateverTheClassifierSays() {
        RetryStep step = new RetryStep("q", RetryPolicy.builder().classifier((r, f, c) -> Decision.retry()).build());
        assertThat(step.afterFailure(new AssertionError("x"), new RetryStep.Attempt(1, T0, 1), T0))
                .isEqualTo(new RetryStep.DeadLetter(EndReason.NOT_RETRYABLE));
        assertThat(step.afterFailure(new InterruptedException(), new RetryStep.Attempt(1, T0, 1), T0))
                .isEqualTo(new RetryStep.DeadLetter(EndReason.INTERRUPTED));
    }

    @Test
    void aThrowingClassifierEndsTheMessageWithItsExceptionAttached() {
        RuntimeException broken = new IllegalStateException("classifier bug");
        RetryStep step = new RetryStep("q", RetryPolicy.builder().classifier((r, f, c) -> {
            throw broken;
        }).build());
        IOException failure = new IOException("down");
        assertThat(step.afterFailure(failure, new RetryStep.Attempt(1, T0, 1), T0))
                .isEqualTo(new RetryStep.DeadLetter(EndReason.NOT_RETRYABLE));
        assertThat(failure.getSuppressed()).containsExactly(broken);
    }

    @Test
    void theLastAllowedAttemptEndsExhausted() {
        RetryStep step = new RetryStep("q", RetryPolicy.builder().maxAttempts(3).build());
        assertThat(step.afterFailure(new IOException(), new RetryStep.Attempt(2, T0, 1), T0))
                .isInstanceOf(RetryStep.Retry.class);
        assertThat(step.afterFailure(new IOException(), new RetryStep.Attempt(3, T0, 1), T0))
                .isEqualTo(new RetryStep.DeadLetter(EndReason.EXHAUSTED));
    }

    @Test
    void aRetryAfterHintIsAMinimumWithTheJitteredBackoffOnTop() {
        RetryStep step = new RetryStep("q", RetryPolicy.builder().maxAttempts(5)
                .classifier((r, f, c) -> Decision.retryAfter(Duration.ofSeconds(10)))
                .backoff(Backoff.fixed(Duration.ofMillis(300))).build());
        assertThat(step.afterFailure(new IOException(), new RetryStep.Attempt(1, T0, 1), T0))
                .isEqualTo(new RetryStep.Retry(Duration.ofMillis(10_300).toNanos()));
    }

    @Test
    void givesUpWithDeadlineWhenTheWaitWouldEndPastTheDeadlineCountedFromTheFirstAttempt() {
        RetryStep step = new RetryStep("q", RetryPolicy.builder().maxAttempts(10)
                .backoff(Backoff.fixed(Duration.ofSeconds(2))).deadline(Duration.ofSeconds(10)).build());
        // 7 s after the first attempt: 2 s more fits in the 10 s deadline
        assertThat(step.afterFailure(new IOException(), new RetryStep.Attempt(3, T0, 1), T0 + 7_000))
                .isInstanceOf(RetryStep.Retry.class);
        // 8 s after: 2 s more would end at the deadline
        assertThat(step.afterFailure(new IOException(), new RetryStep.Attempt(4, T0, 1), T0 + 8_000))
                .isEqualTo(new RetryStep.DeadLetter(EndReason.DEADLINE));
    }

    @Test
    void theClassifierSeesTheAttemptAndTheTimeSinceTheFirst() {
        List<String> seen = new ArrayList<>();
        RetryStep step = new RetryStep("orders", RetryPolicy.builder().maxAttempts(4).deadline(Duration.ofMinutes(1))
                .classifier((r, f, c) -> {
                    seen.add(c.name() + " " + c.attempt() + "/" + c.maxAttempts() + " " + c.elapsed() + " "
                            + c.remaining().orElseThrow());
                    return Decision.stop();
                }).build());
        step.afterFailure(new IOException(), new RetryStep.Attempt(2, T0, 1), T0 + 5_000);
        assertThat(seen).containsExactly("orders 2/4 PT5S PT55S");
    }
}
