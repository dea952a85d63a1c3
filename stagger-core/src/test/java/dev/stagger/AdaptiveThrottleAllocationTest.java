package dev.stagger;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.Callable;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The throttle's hot path allocates nothing: asking ({@link AdaptiveThrottle#tryAcquire()}, with
 * and without drawing a random number), recording ({@link AdaptiveThrottle#onAccepted()},
 * {@link AdaptiveThrottle#onRejected()}) and a {@link Retry} with the throttle whose call
 * succeeds. Measured as the bytes the test thread allocated over many calls after a warm-up, on
 * the system clock and thread-local randomness (the defaults).
 */
class AdaptiveThrottleAllocationTest {
    private static final Callable<String> OK = () -> "ok";

    @BeforeAll
    static void allocationIsMeasurable() {
        Allocations.requireMeasurable();
    }

    private static long bytesPerCall(Runnable call) {
        return Allocations.bytesPerCall(call);
    }

    @Test
    void tryAcquireOnAHealthyBackendAllocatesNothing() {
        AdaptiveThrottle throttle = AdaptiveThrottle.of("healthy");

        long bytes = bytesPerCall(() -> {
            if (throttle.tryAcquire()) {
                throttle.onAccepted();
            }
        });

        assertThat(throttle.rejections()).isZero();
        assertThat(bytes).as("bytes per tryAcquire + onAccepted").isZero();
    }

    @Test
    void tryAcquireThatDrawsAndRefusesAllocatesNothing() {
        AdaptiveThrottle throttle = AdaptiveThrottle.of("overloaded");
        int[] n = {0};

        // one accept in four requests sent: p climbs towards 1, so every ask draws and most are refused
        long bytes = bytesPerCall(() -> {
            if (throttle.tryAcquire()) {
                if ((n[0]++ & 3) == 0) {
                    throttle.onAccepted();
                } else {
                    throttle.onRejected();
                }
            }
        });

        assertThat(throttle.rejectionProbability()).isGreaterThan(0);
        assertThat(throttle.rejections()).isPositive();
        assertThat(bytes).as("bytes per tryAcquire + onAccepted/onRejected").isZero();
    }

    @Test
    void recordingOutcomesAllocatesNothing() {
        AdaptiveThrottle throttle = AdaptiveThrottle.of("recorded");
        Decision retry = Decision.retry();
        Decision accept = Decision.accept();

        long bytes = bytesPerCall(() -> {
            throttle.onAccepted();
            throttle.onRejected();
            throttle.record("ok", null, accept);
            throttle.record(null, null, retry);
        });

        assertThat(throttle.accepts()).isPositive();
        assertThat(bytes).as("bytes per onAccepted + onRejected + two records").isZero();
    }

    @Test
    void aRetryWithAThrottleWhoseCallSucceedsAllocatesNothing() {
        AdaptiveThrottle throttle = AdaptiveThrottle.of("orders");
        Retry retry = Retry.of("orders", RetryPolicy.interactive()).withThrottle(throttle);

        long bytes = bytesPerCall(() -> {
            try {
                retry.call(OK);
            } catch (Exception e) {
                throw new AssertionError(e);
            }
        });

        assertThat(throttle.accepts()).as("every call was counted as an accept").isPositive();
        assertThat(bytes).as("bytes per call").isZero();
    }
}
