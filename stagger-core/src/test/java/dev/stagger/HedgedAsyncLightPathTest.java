package dev.stagger;

import static org.assertj.core.api.Assertions.assertThat;

import dev.stagger.testing.VirtualClock;
import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Async hedged calls of a retry needing nothing per attempt (no listener, breaker, throttle, result
 * predicate, attempt timeout): a stage complete on return makes no execution; any other is adopted
 * by one and hedged as usual. Delays on the virtual clock.
 */
class HedgedAsyncLightPathTest {
    private static final Duration DELAY = Duration.ofMillis(100);

    private final VirtualClock clock = new VirtualClock();

    @BeforeAll
    static void allocationIsMeasurable() {
        Allocations.requireMeasurable();
    }

    private static RetryPolicy.Builder policy() {
        return RetryPolicy.builder().maxAttempts(3).backoff(Backoff.none());
    }

    @Test
    void aStageCompleteOnReturnAllocatesNoMoreThanAPlainAsyncRetry() {
        CompletableFuture<String> done = CompletableFuture.completedFuture("ok");
        Supplier<CompletableFuture<String>> operation = () -> done;
        Retry plain = Retry.of("plain", policy().build());
        Retry hedged = Retry.of("hedged", policy().hedge(HedgePolicy.after(Duration.ofSeconds(10))).build());

        long plainBytes = Allocations.bytesPerCallWithoutFrames(() -> plain.callAsync(operation).join());
        long hedgedBytes = Allocations.bytesPerCallWithoutFrames(() -> hedged.callAsync(operation).join());

        assertThat(hedgedBytes).as("hedged bytes per call, plain " + plainBytes).isLessThanOrEqualTo(plainBytes);
    }

    @Test
    void aPendingStageSlowerThanTheDelayIsBackedUpByAHedgeAndCancelled() throws Exception {
        CompletableFuture<String> slow = new CompletableFuture<>();
        AtomicInteger calls = new AtomicInteger();
        Retry retry = Retry.of("hedged", policy().hedge(HedgePolicy.after(DELAY)).build()).withClock(clock);

        CompletableFuture<String> answer = retry.callAsync(
                () -> calls.incrementAndGet() == 1 ? slow : CompletableFuture.completedFuture("hedge"));
        assertThat(answer).isNotDone();
        clock.advance(DELAY);

        assertThat(answer.get(10, TimeUnit.SECONDS)).isEqualTo("hedge");
        assertThat(slow).isCancelled();
        assertThat(calls).hasValue(2);
    }

    @Test
    void aStageFailedOnReturnIsRetriedByTheEngine() throws Exception {
        AtomicInteger calls = new AtomicInteger();
        Retry retry = Retry.of("hedged", policy().hedge(HedgePolicy.after(DELAY)).build()).withClock(clock);

        CompletableFuture<String> answer = retry.callAsync(() -> calls.incrementAndGet() == 1
                ? CompletableFuture.failedFuture(new IOException("transient"))
                : CompletableFuture.completedFuture("second"));

        assertThat(answer.get(10, TimeUnit.SECONDS)).isEqualTo("second");
        assertThat(calls).hasValue(2);
    }
}
