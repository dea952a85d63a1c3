package dev.stagger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import dev.stagger.testing.VirtualClock;
import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/**
 * A retry with a bulkhead and no listener or breaker runs its first attempt inline, as without one:
 * a free permit is taken and given back without an execution object, a full bulkhead hands the
 * call to the execution (which refuses or waits), and a failed first attempt's permit is given
 * back by the execution that retries it.
 */
class BulkheadFastPathTest {
    private final VirtualClock clock = new VirtualClock();

    private Retry retry(Bulkhead bulkhead) {
        return Retry.of("inline", RetryPolicy.builder().maxAttempts(3).backoff(Backoff.fixed(Duration.ofSeconds(1))).build())
                .withBulkhead(bulkhead).withClock(clock).withoutBudget();
    }

    @Test
    void aCallWithAFreePermitGivesItBack() throws Exception {
        Bulkhead bulkhead = Bulkhead.builder("b").maxConcurrent(1).clock(clock).build();

        assertThat(retry(bulkhead).call(bulkhead::inFlight)).isEqualTo(1);

        assertThat(bulkhead.inFlight()).isZero();
    }

    @Test
    void aCallFindingTheBulkheadFullIsRefused() {
        Bulkhead bulkhead = Bulkhead.builder("b").maxConcurrent(1).clock(clock).build();
        retry(bulkhead).callAsync(CompletableFuture::new); // holds the only permit

        Throwable thrown = catchThrowable(() -> retry(bulkhead).call(() -> "never run"));

        assertThat(thrown).isInstanceOf(BulkheadFullException.class);
        assertThat(bulkhead.refusals()).isEqualTo(1);
    }

    @Test
    void aFailedFirstAttemptGivesItsPermitBackAsADropBeforeTheRetry() throws Exception {
        Bulkhead bulkhead = Bulkhead.builder("b").maxConcurrent(10).adaptive(Duration.ofSeconds(10)).clock(clock).build();
        int[] calls = {0};

        String answer = retry(bulkhead).call(() -> {
            if (calls[0]++ == 0) {
                throw new IOException("503");
            }
            return bulkhead.inFlight() + " in flight";
        });

        assertThat(answer).isEqualTo("1 in flight");
        assertThat(bulkhead.inFlight()).isZero();
        assertThat(bulkhead.limit()).isEqualTo(9); // the failed attempt was sampled as a drop
    }

    @Test
    void aSuccessfulCallThroughAFixedBulkheadAllocatesNothing() {
        Allocations.requireMeasurable();
        Bulkhead bulkhead = Bulkhead.of("fixed", 10);
        Retry retry = Retry.of("inline", RetryPolicy.builder().build()).withBulkhead(bulkhead);
        Callable<String> ok = () -> "ok";

        long bytes = Allocations.bytesPerCallWithoutFrames(() -> {
            try {
                retry.call(ok);
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        });

        assertThat(bytes).as("bytes per call").isZero();
        assertThat(bulkhead.inFlight()).isZero();
    }
}
