package dev.stagger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import dev.stagger.testing.VirtualClock;
import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** A Retry asks its throttle before every attempt and tells it which attempts were accepted. */
class AdaptiveThrottleInRetryTest {
    private final VirtualClock clock = new VirtualClock();
    private final RecordingListener events = new RecordingListener();
    private final AtomicInteger calls = new AtomicInteger();

    private Retry retry(AdaptiveThrottle throttle, int maxAttempts) {
        RetryPolicy policy = RetryPolicy.builder().maxAttempts(maxAttempts)
                .backoff(Backoff.fixed(Duration.ofSeconds(1))).build();
        return Retry.of("throttled", policy).withThrottle(throttle).withClock(clock).withListener(events);
    }

    private AdaptiveThrottle.Builder throttle() {
        return AdaptiveThrottle.builder("t").clock(clock);
    }

    /** A throttle that has seen {@code requests} requests and no accepts, refusing whenever p > 0. */
    private AdaptiveThrottle rejectingThrottle(int requests) {
        AdaptiveThrottle throttle = throttle().random(RandomSource.sequence(0.0)).build();
        for (int i = 0; i < requests; i++) {
            throttle.onRejected();
        }
        return throttle;
    }

    @Test
    void aRefusedFirstAttemptEndsTheCallWithThrottledWithoutCallingTheOperation() {
        Retry retry = retry(rejectingThrottle(10), 3);

        Throwable thrown = catchThrowable(() -> retry.call(() -> calls.incrementAndGet()));

        assertThat(calls).hasValue(0);
        assertThat(thrown).isInstanceOf(ThrottledException.class).hasNoCause();
        ThrottledException refused = (ThrottledException) thrown;
        assertThat(refused.reason()).isEqualTo(EndReason.THROTTLED);
        assertThat(refused.throttleName()).isEqualTo("t");
        assertThat(refused.rejectionProbability()).isGreaterThan(0.9);
        assertThat(events.onlyFinish().reason()).isEqualTo(EndReason.THROTTLED);
        assertThat(events.onlyFinish().attempts()).isZero();
    }

    @Test
    void aRefusedRetryEndsTheCallWithTheLastFailureAsCause() {
        AdaptiveThrottle throttle = throttle().random(RandomSource.sequence(0.0)).build();
        IOException down = new IOException("503");

        Throwable thrown = catchThrowable(() -> retry(throttle, 5).call(() -> {
            calls.incrementAndGet();
            throw down;
        }));

        // attempt 1: p = 0, sent, rejected by the backend; attempt 2: p = 1 / 2 > 0 = the draw
        assertThat(calls).hasValue(1);
        assertThat(thrown).isInstanceOf(ThrottledException.class).hasCause(down);
        assertThat(events.onlyFinish().reason()).isEqualTo(EndReason.THROTTLED);
        assertThat(events.onlyFinish().attempts()).isEqualTo(1);
        assertThat(clock.sleeps()).as("the wait before the refused attempt").containsExactly(Duration.ofSeconds(1));
    }

    @Test
    void everyAttemptIsARequestAndOnlyAcceptedOnesAreAccepts() throws Exception {
        AdaptiveThrottle throttle = throttle().random(RandomSource.sequence(0.999)).build();

        Object result = retry(throttle, 5).call(() -> {
            if (calls.incrementAndGet() < 3) {
                throw new IOException("timeout");
            }
            return "ok";
        });

        assertThat(result).isEqualTo("ok");
        assertThat(throttle.requests()).isEqualTo(3);
        assertThat(throttle.accepts()).isEqualTo(1);
    }

    @Test
    void aRetryAfterHintIsARejection() throws Exception {
        AdaptiveThrottle throttle = throttle().random(RandomSource.sequence(0.999)).build();
        RetryPolicy policy = RetryPolicy.builder().maxAttempts(2).backoff(Backoff.none())
                .classifier((result, failure, context) -> "503".equals(result)
                        ? Decision.retryAfter(Duration.ofSeconds(1)) : Decision.accept())
                .build();
        Retry retry = Retry.of("hinted", policy).withThrottle(throttle).withClock(clock);

        retry.call(() -> calls.incrementAndGet() == 1 ? "503" : "200");

        assertThat(throttle.requests()).isEqualTo(2);
        assertThat(throttle.accepts()).isEqualTo(1);
    }

    @Test
    void anAsyncCallIsThrottledToo() {
        Retry retry = retry(rejectingThrottle(10), 3);

        CompletableFuture<Integer> future = retry.callAsync(() -> CompletableFuture.completedFuture(calls.incrementAndGet()));
        clock.runUntilIdle();

        assertThat(future).isCompletedExceptionally();
        assertThat(catchThrowable(future::join)).hasCauseInstanceOf(ThrottledException.class);
        assertThat(calls).hasValue(0);
        assertThat(events.onlyFinish().reason()).isEqualTo(EndReason.THROTTLED);
    }

    @Test
    void aThrottleRefusalGivesTheBreakersPermitBack() {
        CircuitBreaker breaker = CircuitBreaker.builder("b").consecutiveFailures(1).halfOpenPermits(1)
                .openDuration(Duration.ofSeconds(1)).clock(clock).build();
        catchThrowable(() -> breaker.call(() -> {
            throw new IOException("down");
        }));
        clock.advance(Duration.ofSeconds(1)); // half-open: one probe allowed
        Retry retry = retry(rejectingThrottle(10), 1).withCircuitBreaker(breaker);

        catchThrowable(() -> retry.call(() -> calls.incrementAndGet()));

        assertThat(breaker.state()).isEqualTo(CircuitBreaker.State.HALF_OPEN);
        assertThat(breaker.tryAcquirePermission().isGranted()).as("the probe was not used up").isTrue();
    }

    /** A retry with no listener and no breaker runs the first attempt inline; the throttle is asked and told there. */
    private Retry inline(AdaptiveThrottle throttle, int maxAttempts) {
        RetryPolicy policy = RetryPolicy.builder().maxAttempts(maxAttempts)
                .backoff(Backoff.fixed(Duration.ofSeconds(1))).build();
        return Retry.of("inline", policy).withThrottle(throttle).withClock(clock);
    }

    @Test
    void withoutAListenerARefusedFirstAttemptEndsTheCallWithThrottledWithoutCallingTheOperation() {
        AdaptiveThrottle throttle = rejectingThrottle(10);

        Throwable thrown = catchThrowable(() -> inline(throttle, 3).call(() -> calls.incrementAndGet()));

        assertThat(calls).hasValue(0);
        assertThat(thrown).isInstanceOf(ThrottledException.class).hasNoCause();
        assertThat(((ThrottledException) thrown).reason()).isEqualTo(EndReason.THROTTLED);
        assertThat(throttle.rejections()).as("the refusal counted once").isEqualTo(1);
        assertThat(throttle.requests()).isEqualTo(11);
    }

    @Test
    void withoutAListenerARefusedFirstAttemptIsAnsweredByTheFallback() throws Exception {
        Retry retry = inline(rejectingThrottle(10), 3).withFallback(Fallback.of(c -> "deferred: " + c.reason()));

        Object answer = retry.call(() -> (Object) calls.incrementAndGet());

        assertThat(answer).isEqualTo("deferred: THROTTLED");
        assertThat(calls).hasValue(0);
    }

    @Test
    void withoutAListenerEveryAttemptIsARequestAndOnlyAcceptedOnesAreAccepts() throws Exception {
        AdaptiveThrottle throttle = throttle().random(RandomSource.sequence(0.999)).build();

        Object first = inline(throttle, 5).call(() -> "ok");
        Object second = inline(throttle, 5).call(() -> {
            if (calls.incrementAndGet() < 3) {
                throw new IOException("timeout");
            }
            return "ok";
        });

        assertThat(first).isEqualTo("ok");
        assertThat(second).isEqualTo("ok");
        assertThat(throttle.requests()).isEqualTo(4);
        assertThat(throttle.accepts()).isEqualTo(2);
    }

    @Test
    void theThrottleIsReadableFromTheRetry() {
        AdaptiveThrottle throttle = throttle().build();

        assertThat(retry(throttle, 2).throttle()).containsSame(throttle);
        assertThat(Retry.of("plain", RetryPolicy.builder().build()).throttle()).isEmpty();
    }
}
