package dev.stagger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import dev.stagger.testing.VirtualClock;
import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** The whole-call deadline and server hints (Retry-After). */
class DeadlineAndRetryAfterTest {
    private final VirtualClock clock = new VirtualClock();
    private final RecordingListener events = new RecordingListener();
    private final AtomicInteger calls = new AtomicInteger();

    private Retry retry(RetryPolicy policy, double draw) {
        return Retry.of("deadline", policy).withClock(clock).withListener(events).withRandom(RandomSource.sequence(draw));
    }

    private Object alwaysFails() throws IOException {
        calls.incrementAndGet();
        throw new IOException("down");
    }

    @Test
    void givesUpAtOnceWhenTheNextWaitWouldEndPastTheDeadline() {
        // Attempts at 0, 400, 800 ms; the next wait would end at 1200 ms > 1 s: not slept.
        RetryPolicy policy = RetryPolicy.builder().maxAttempts(10).backoff(Backoff.fixed(Duration.ofMillis(400)))
                .deadline(Duration.ofSeconds(1)).build();

        Throwable thrown = catchThrowable(() -> retry(policy, 0.5).call(this::alwaysFails));

        assertThat(thrown).isInstanceOf(IOException.class);
        assertThat(calls).hasValue(3);
        assertThat(clock.sleeps()).isEqualTo(Delays.millis(400, 400));
        assertThat(clock.now()).isEqualTo(Duration.ofMillis(800));
        assertThat(events.onlyFinish().reason()).isEqualTo(EndReason.DEADLINE);
    }

    @Test
    void timeSpentInsideAttemptsCountsAgainstTheDeadline() {
        RetryPolicy policy = RetryPolicy.builder().maxAttempts(10).backoff(Backoff.fixed(Duration.ofMillis(100)))
                .deadline(Duration.ofSeconds(1)).build();

        catchThrowable(() -> retry(policy, 0.5).call(() -> {
            clock.advance(Duration.ofMillis(300)); // each attempt takes 300 ms
            return alwaysFails();
        }));

        // 0–300, wait, 400–700, wait, 800–1100: the third attempt overran, so no further wait.
        assertThat(calls).hasValue(3);
        assertThat(clock.sleeps()).isEqualTo(Delays.millis(100, 100));
        assertThat(events.onlyFinish().reason()).isEqualTo(EndReason.DEADLINE);
    }

    @Test
    void retryAfterWaitsAtLeastTheHintWithTheBackoffsJitterOnTop() throws Exception {
        RetryPolicy policy = RetryPolicy.builder().maxAttempts(3)
                .backoff(Backoff.fixed(Duration.ofMillis(100)).jitter(Jitter.full()))
                .classifier((r, f, c) -> f != null ? Decision.retryAfter(Duration.ofSeconds(2)) : Decision.accept())
                .build();

        String result = retry(policy, 0.5).call(() -> {
            if (calls.incrementAndGet() == 1) {
                throw new IOException("503 with Retry-After: 2");
            }
            return "ok";
        });

        assertThat(result).isEqualTo("ok");
        assertThat(clock.sleeps()).containsExactly(Duration.ofMillis(2050)); // 2 s + U(0, 100 ms) at 0.5
        assertThat(events.scheduled.get(0).decision().minDelay()).isEqualTo(Duration.ofSeconds(2));
    }

    @Test
    void retryAfterIsNeverShortenedByAZeroJitterDraw() throws Exception {
        RetryPolicy policy = RetryPolicy.builder().maxAttempts(2)
                .backoff(Backoff.exponential(Duration.ofMillis(100)).jitter(Jitter.full()))
                .classifier((r, f, c) -> f != null ? Decision.retryAfter(Duration.ofSeconds(3)) : Decision.accept())
                .build();

        retry(policy, 0.0).call(() -> calls.incrementAndGet() == 1 ? alwaysFails() : "ok");

        assertThat(clock.sleeps()).containsExactly(Duration.ofSeconds(3));
    }

    @Test
    void retryAfterLongerThanMaxDelayIsStillHonoured() throws Exception {
        RetryPolicy policy = RetryPolicy.builder().maxAttempts(2)
                .backoff(Backoff.exponential(Duration.ofMillis(100)).maxDelay(Duration.ofSeconds(1)))
                .classifier((r, f, c) -> f != null ? Decision.retryAfter(Duration.ofSeconds(30)) : Decision.accept())
                .build();

        retry(policy, 0.5).call(() -> calls.incrementAndGet() == 1 ? alwaysFails() : "ok");

        assertThat(clock.sleeps()).singleElement().satisfies(d -> assertThat(d).isGreaterThanOrEqualTo(Duration.ofSeconds(30)));
    }

    @Test
    void retryAfterLongerThanTheRemainingDeadlineGivesUpAtOnce() {
        RetryPolicy policy = RetryPolicy.builder().maxAttempts(5).backoff(Backoff.fixed(Duration.ofMillis(10)))
                .deadline(Duration.ofSeconds(10))
                .classifier((r, f, c) -> Decision.retryAfter(Duration.ofSeconds(60)))
                .build();

        Throwable thrown = catchThrowable(() -> retry(policy, 0.5).call(this::alwaysFails));

        assertThat(thrown).isInstanceOf(IOException.class);
        assertThat(calls).hasValue(1);
        assertThat(clock.sleeps()).isEmpty();
        assertThat(clock.now()).isEqualTo(Duration.ZERO);
        assertThat(events.onlyFinish().reason()).isEqualTo(EndReason.DEADLINE);
    }

    @Test
    void aRetriedResultWithRetryAfterAlsoRespectsTheHint() throws Exception {
        RetryPolicy policy = RetryPolicy.builder().maxAttempts(2).backoff(Backoff.none())
                .classifier((r, f, c) -> Integer.valueOf(429).equals(r) ? Decision.retryAfter(Duration.ofSeconds(1))
                        : Decision.accept())
                .build();

        Integer status = retry(policy, 0.5).call(() -> calls.incrementAndGet() == 1 ? 429 : 200);

        assertThat(status).isEqualTo(200);
        assertThat(clock.sleeps()).containsExactly(Duration.ofSeconds(1));
    }
}
