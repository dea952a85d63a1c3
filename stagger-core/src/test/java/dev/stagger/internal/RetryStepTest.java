package dev.stagger.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.stagger.Nesting;
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
    private final VirtualClock clock = new VirtualClock();
    private final long t0 = clock.currentTimeMillis();

    private RetryStep step(String name, RetryPolicy policy) {
        return new RetryStep(name, policy, clock, RandomSource.seeded(1), Nesting.DEFER);
    }

    /** Decides attempt {@code number} of a message first attempted at t0, {@code afterMillis} later. */
    private RetryStep.Outcome decide(RetryStep step, Throwable failure, int number, long afterMillis) {
        clock.advance(Duration.ofMillis(t0 + afterMillis - clock.currentTimeMillis()));
        return step.afterFailure(failure, new RetryStep.Attempt(number, t0, 0));
    }

    @Test
    void waitsAsTheCoreRetryDoesForTheSameRandomNumbersAcrossDeliveries() throws Exception {
        // decorrelated jitter keeps state from one wait to the next: carried in a header from one
        // delivery to the next, each wait must equal the core call's wait for the same random numbers
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
        RetryStep step = new RetryStep("orders", policy, clock, RandomSource.seeded(seed), Nesting.DEFER);
        List<Long> consumer = new ArrayList<>();
        long backoffState = 0;
        for (int attempt = 1; attempt < 6; attempt++) {
            // each delivery builds its attempt from the headers the previous one wrote
            RetryStep.Retry r = (RetryStep.Retry) step.afterFailure(new IOException("down"),
                    new RetryStep.Attempt(attempt, t0, backoffState));
            consumer.add(r.delayNanos());
            backoffState = r.backoffState();
        }
        assertThat(consumer).hasSize(5).isEqualTo(core);
        assertThat(consumer).doesNotHaveDuplicates(); // not a fresh schedule's first wait again and again
    }

    @Test
    void deadLettersThePermanentFailureAsNotRetryable() {
        RetryStep step = step("q", RetryPolicy.builder().abortOn(IllegalArgumentException.class).build());
        assertThat(decide(step, new IllegalArgumentException("bad"), 1, 0))
                .isEqualTo(new RetryStep.DeadLetter(EndReason.NOT_RETRYABLE));
    }

    @Test
    void neverRetriesAnErrorWhateverTheClassifierSays() {
        RetryStep step = step("q", RetryPolicy.builder().classifier((r, f, c) -> Decision.retry()).build());
        assertThat(decide(step, new AssertionError("x"), 1, 0))
                .isEqualTo(new RetryStep.DeadLetter(EndReason.NOT_RETRYABLE));
        assertThat(decide(step, new InterruptedException(), 1, 0))
                .isEqualTo(new RetryStep.DeadLetter(EndReason.INTERRUPTED));
    }

    @Test
    void aThrowingClassifierEndsTheMessageWithItsExceptionAttached() {
        RuntimeException broken = new IllegalStateException("classifier bug");
        RetryStep step = step("q", RetryPolicy.builder().classifier((r, f, c) -> {
            throw broken;
        }).build());
        IOException failure = new IOException("down");
        assertThat(decide(step, failure, 1, 0))
                .isEqualTo(new RetryStep.DeadLetter(EndReason.NOT_RETRYABLE));
        assertThat(failure.getSuppressed()).containsExactly(broken);
    }

    @Test
    void theLastAllowedAttemptEndsExhausted() {
        RetryStep step = step("q", RetryPolicy.builder().maxAttempts(3).build());
        assertThat(decide(step, new IOException(), 2, 0))
                .isInstanceOf(RetryStep.Retry.class);
        assertThat(decide(step, new IOException(), 3, 0))
                .isEqualTo(new RetryStep.DeadLetter(EndReason.EXHAUSTED));
    }

    @Test
    void aRetryAfterHintIsAMinimumWithTheJitteredBackoffOnTop() {
        RetryStep step = step("q", RetryPolicy.builder().maxAttempts(5)
                .classifier((r, f, c) -> Decision.retryAfter(Duration.ofSeconds(10)))
                .backoff(Backoff.fixed(Duration.ofMillis(300))).build());
        assertThat(((RetryStep.Retry) decide(step, new IOException(), 1, 0)).delayNanos())
                .isEqualTo(Duration.ofMillis(10_300).toNanos());
    }

    @Test
    void givesUpWithDeadlineWhenTheWaitWouldEndPastTheDeadlineCountedFromTheFirstAttempt() {
        RetryStep step = step("q", RetryPolicy.builder().maxAttempts(10)
                .backoff(Backoff.fixed(Duration.ofSeconds(2))).deadline(Duration.ofSeconds(10)).build());
        // 7 s after the first attempt: 2 s more fits in the 10 s deadline
        assertThat(decide(step, new IOException(), 3, 7_000))
                .isInstanceOf(RetryStep.Retry.class);
        // 8 s after: 2 s more would end at the deadline
        assertThat(decide(step, new IOException(), 4, 8_000))
                .isEqualTo(new RetryStep.DeadLetter(EndReason.DEADLINE));
    }

    @Test
    void theClassifierSeesTheAttemptAndTheTimeSinceTheFirst() {
        List<String> seen = new ArrayList<>();
        RetryStep step = step("orders", RetryPolicy.builder().maxAttempts(4).deadline(Duration.ofMinutes(1))
                .classifier((r, f, c) -> {
                    seen.add(c.name() + " " + c.attempt() + "/" + c.maxAttempts() + " " + c.elapsed() + " "
                            + c.remaining().orElseThrow());
                    return Decision.stop();
                }).build());
        decide(step, new IOException(), 2, 5_000);
        assertThat(seen).containsExactly("orders 2/4 PT5S PT55S");
    }
}
