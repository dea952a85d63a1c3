package dev.stagger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import dev.stagger.testing.VirtualClock;
import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * A deadline on the fast path (no listener, breaker or result rule): the start of the call comes
 * from the coarse clock, read once before the first attempt, and the precise clock is read only
 * once an attempt has failed.
 */
class DeadlineWithoutClockReadTest {
    private final VirtualClock time = new VirtualClock();
    private final AtomicInteger calls = new AtomicInteger();

    private static RetryPolicy policy(Duration wait, Duration deadline) {
        return RetryPolicy.builder().maxAttempts(5).backoff(Backoff.fixed(wait)).deadline(deadline).build();
    }

    @Test
    void aFirstAttemptSuccessUnderADeadlineReadsOnlyTheCoarseClock() throws Exception {
        CountingClock clock = new CountingClock(time, 0);
        Retry retry = Retry.of("fast", policy(Duration.ofSeconds(1), Duration.ofSeconds(10))).withClock(clock);
        clock.coarseReads = 0; // the default budget made on this clock read it once; the call is what counts

        assertThat(retry.call(() -> "ok")).isEqualTo("ok");

        assertThat(clock.preciseReads).as("no OS clock read").isZero();
        assertThat(clock.coarseReads).isOne();
    }

    @Test
    void theDeadlineCountsFromTheStartOfTheFirstAttemptNotFromItsFailure() {
        // The first attempt takes 3 s; waiting 2.5 s more would end at 5.5 s, past the 5 s deadline.
        Retry retry = Retry.of("fast", policy(Duration.ofMillis(2500), Duration.ofSeconds(5))).withClock(time);

        Throwable thrown = catchThrowable(() -> retry.call(() -> {
            calls.incrementAndGet();
            time.advance(Duration.ofSeconds(3));
            throw new IOException("slow and down");
        }));

        assertThat(thrown).isInstanceOf(IOException.class);
        assertThat(calls).as("not retried: the wait would pass the deadline").hasValue(1);
        assertThat(time.sleeps()).isEmpty();
    }

    @Test
    void aWaitThatFitsTheDeadlineFromTheCallsStartIsStillTaken() {
        // Control for the test above: the same call with a 2 s first attempt fits (2 + 2.5 < 5).
        Retry retry = Retry.of("fast", policy(Duration.ofMillis(2500), Duration.ofSeconds(5))).withClock(time);

        catchThrowable(() -> retry.call(() -> {
            calls.incrementAndGet();
            time.advance(Duration.ofSeconds(2));
            throw new IOException("slow and down");
        }));

        assertThat(calls).hasValue(2);
        assertThat(time.sleeps()).containsExactly(Duration.ofMillis(2500));
    }

    @Test
    void aCoarseStartThatLagsEndsTheCallAtMostThatMuchEarlyNeverLate() {
        // The coarse clock reads 1 ms behind: a wait ending 0.5 ms before the deadline, measured
        // from the true start, is judged to end 0.5 ms after it, so the call ends with DEADLINE.
        CountingClock lagging = new CountingClock(time, Duration.ofMillis(1).toNanos());
        time.advance(Duration.ofSeconds(1));
        Retry retry = Retry.of("fast", policy(Duration.ofNanos(999_500_000), Duration.ofSeconds(1))).withClock(lagging);

        catchThrowable(() -> retry.call(() -> {
            calls.incrementAndGet();
            throw new IOException("down");
        }));

        assertThat(calls).hasValue(1);
        assertThat(time.sleeps()).isEmpty();
    }

    /** A virtual clock that counts its readings; its coarse reading lags the precise one by {@code lagNanos}. */
    private static final class CountingClock implements Clock {
        private final VirtualClock time;
        private final long lagNanos;
        int preciseReads;
        int coarseReads;

        CountingClock(VirtualClock time, long lagNanos) {
            this.time = time;
            this.lagNanos = lagNanos;
        }

        @Override
        public long nanoTime() {
            preciseReads++;
            return time.nanoTime();
        }

        @Override
        public long coarseNanoTime() {
            coarseReads++;
            return time.nanoTime() - lagNanos;
        }

        @Override
        public long currentTimeMillis() {
            return time.currentTimeMillis();
        }

        @Override
        public void sleep(long nanos) throws InterruptedException {
            time.sleep(nanos);
        }

        @Override
        public Cancellable schedule(Runnable task, long delayNanos) {
            return time.schedule(task, delayNanos);
        }
    }
}
