package dev.stagger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;

import dev.stagger.testing.VirtualClock;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/** A scope bounds the retries started in it and records the ones that ended without success. */
class RetryScopeTest {
    private final VirtualClock clock = new VirtualClock();
    private final AtomicInteger calls = new AtomicInteger();

    private Retry retry(String name, int attempts, Duration wait) {
        return Retry.of(name, RetryPolicy.builder().maxAttempts(attempts).backoff(Backoff.fixed(wait)).build())
                .withClock(clock).withoutBudget();
    }

    private String failing() throws IOException {
        calls.incrementAndGet();
        throw new IOException("reset");
    }

    @Test
    void aScopeBoundsEveryRetryStartedInIt() {
        Retry inner = retry("http", 20, Duration.ofMillis(300));
        List<Duration> remaining = new ArrayList<>();

        Throwable thrown;
        try (RetryScope scope = RetryScope.open(Duration.ofSeconds(1), clock)) {
            thrown = catchThrowable(() -> inner.call(context -> {
                remaining.add(context.remaining().orElseThrow());
                return failing();
            }));
            assertThat(scope.decided()).hasValue(new RetryScope.Outcome("http", 4, EndReason.DEADLINE));
        }

        assertThat(thrown).hasMessage("reset");
        assertThat(calls).as("attempts at 0, 300, 600 and 900 ms; the next wait ends past the scope's 1 s").hasValue(4);
        assertThat(remaining.get(0)).isEqualTo(Duration.ofSeconds(1));
        assertThat(remaining.get(3)).isEqualTo(Duration.ofMillis(100));
        assertThat(clock.now()).isLessThan(Duration.ofSeconds(1));
    }

    @Test
    void aFastPathRetryIsBoundedToo() {
        Retry inner = retry("http", 20, Duration.ofMillis(300)); // no listener, no deadline of its own

        try (RetryScope scope = RetryScope.open(Duration.ofSeconds(1), clock)) {
            catchThrowable(() -> inner.call(this::failing));
        }

        assertThat(calls).hasValue(4);
    }

    @Test
    void decidedTellsTheLatestRetryThatEndedWithoutSuccess() {
        try (RetryScope scope = RetryScope.open(null, clock)) {
            assertThat(scope.decided()).isEmpty();
            assertThat(scope.remaining()).isEmpty();
            catchThrowable(() -> retry("http", 3, Duration.ofMillis(10)).call(this::failing));

            assertThat(scope.decided()).hasValue(new RetryScope.Outcome("http", 3, EndReason.EXHAUSTED));
        }
    }

    @Test
    void aDecisionMadeBeforeTheScopeOpenedIsNotItsOwn() {
        catchThrowable(() -> retry("earlier", 2, Duration.ofMillis(10)).call(this::failing));

        try (RetryScope scope = RetryScope.open(Duration.ofSeconds(5), clock)) {
            assertThat(scope.decided()).isEmpty();
        }
    }

    @Test
    void aCallAFallbackAnsweredIsNotADecision() throws Exception {
        Retry answered = retry("http", 2, Duration.ofMillis(10)).withFallback(Fallback.of(context -> "cached"));

        try (RetryScope scope = RetryScope.open(Duration.ofSeconds(5), clock)) {
            assertThat(answered.call(this::failing)).isEqualTo("cached");
            assertThat(scope.decided()).isEmpty();
        }
    }

    @Test
    void anAsyncRetryStartedInTheScopeTellsItFromAnotherThread() {
        // on the system clock: its attempts run on the scheduler's thread
        Retry inner = Retry.of("async-http", RetryPolicy.builder().maxAttempts(2).backoff(Backoff.none()).build())
                .withoutBudget();

        try (RetryScope scope = RetryScope.open(Duration.ofMinutes(1))) {
            catchThrowable(() -> inner.callAsync(() -> CompletableFuture.<String>failedFuture(new IOException("reset"))).join());

            assertThat(scope.decided()).hasValue(new RetryScope.Outcome("async-http", 2, EndReason.EXHAUSTED));
        }
    }

    @Test
    void currentRemainingIsTheInnermostDeadline() throws Exception {
        Retry withDeadline = Retry.of("db", RetryPolicy.builder().deadline(Duration.ofSeconds(5)).build())
                .withClock(clock).withoutBudget();

        try (RetryScope outer = RetryScope.open(Duration.ofSeconds(2), clock)) {
            assertThat(RetryScope.currentRemaining()).hasValue(Duration.ofSeconds(2));
            clock.advance(Duration.ofMillis(500));
            assertThat(withDeadline.call(RetryScope::currentRemaining)).as("the scope's 1.5 s left, not the retry's 5 s")
                    .hasValue(Duration.ofMillis(1_500));
            try (RetryScope inner = RetryScope.open(Duration.ofMillis(200), clock)) {
                assertThat(RetryScope.currentRemaining()).hasValue(Duration.ofMillis(200));
            }
            try (RetryScope longer = RetryScope.open(Duration.ofHours(1), clock)) {
                assertThat(longer.remaining()).as("never beyond the scope around it").hasValue(Duration.ofMillis(1_500));
            }
        }
        assertThat(RetryScope.currentRemaining()).isEmpty();
        assertThat(withDeadline.call(RetryScope::currentRemaining)).hasValue(Duration.ofSeconds(5));
    }

    @Test
    void closingIsIdempotentAndOnlyOnTheOpeningThread() throws Exception {
        RetryScope scope = RetryScope.open(Duration.ofSeconds(1), clock);
        AtomicReference<Throwable> elsewhere = new AtomicReference<>();
        Thread other = new Thread(() -> elsewhere.set(catchThrowable(scope::close)));
        other.start();
        other.join();

        assertThat(elsewhere.get()).isInstanceOf(IllegalStateException.class).hasMessageContaining("thread that opened it");
        assertThat(RetryScope.currentRemaining()).isPresent();
        scope.close();
        scope.close();
        assertThat(RetryScope.currentRemaining()).isEmpty();
    }

    @Test
    void aNegativeRemainingIsRefusedByName() {
        assertThatThrownBy(() -> RetryScope.open(Duration.ofMillis(-1)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("remaining");
    }
}
