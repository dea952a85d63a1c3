package dev.stagger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;

import dev.stagger.testing.VirtualClock;
import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** {@link Retry#withFallback}: every end reason, every core kind, sync and async, on a virtual clock. */
class FallbackTest {
    private static final Duration OPEN = Duration.ofSeconds(30);

    private final VirtualClock clock = new VirtualClock();
    private final RecordingListener events = new RecordingListener();
    private final AtomicInteger calls = new AtomicInteger();
    private final AtomicInteger fallbackRuns = new AtomicInteger();

    @AfterEach
    void clearInterruptStatus() {
        Thread.interrupted();
    }

    private static RetryPolicy.Builder fixed(int maxAttempts) {
        return RetryPolicy.builder().maxAttempts(maxAttempts).backoff(Backoff.fixed(Duration.ofSeconds(1)));
    }

    private Retry retry(RetryPolicy.Builder policy) {
        return Retry.of("prices", policy.build()).withClock(clock).withListener(events)
                .withRandom(RandomSource.sequence(0.5));
    }

    /** A retry whose calls, failing with IOException every time, end with {@code reason}. */
    private Retry endingWith(EndReason reason) {
        Retry base = retry(fixed(3));
        switch (reason) {
            case EXHAUSTED:
                return base;
            case NOT_RETRYABLE:
                return retry(fixed(3).abortOn(IOException.class));
            case DEADLINE:
                return retry(fixed(10).deadline(Duration.ofMillis(1500)));
            case BUDGET: {
                RetryBudget empty = RetryBudget.builder("empty").maxTokens(1).minRetriesPerSecond(0).clock(clock).build();
                empty.tryAcquireRetry();
                return base.withBudget(empty);
            }
            case CIRCUIT_OPEN: {
                CircuitBreaker breaker = CircuitBreaker.builder("down").consecutiveFailures(1).openDuration(OPEN)
                        .clock(clock).build();
                CircuitBreakerInRetryTest.otherCallersFail(breaker, 1);
                return base.withCircuitBreaker(breaker);
            }
            case THROTTLED: {
                // the backend rejected everything lately, and the draw (0) is below any p > 0
                AdaptiveThrottle rejecting = AdaptiveThrottle.builder("backend").clock(clock)
                        .random(RandomSource.sequence(0.0)).build();
                for (int i = 0; i < 10; i++) {
                    rejecting.onRejected();
                }
                return base.withThrottle(rejecting);
            }
            default:
                throw new AssertionError(reason);
        }
    }

    private String failing() throws IOException {
        calls.incrementAndGet();
        throw new IOException("connection refused by 10.0.0.7:8443");
    }

    private CompletableFuture<String> failingAsync() {
        calls.incrementAndGet();
        return CompletableFuture.failedFuture(new IOException("connection refused by 10.0.0.7:8443"));
    }

    enum Kind { CUSTOM, CACHE, MESSAGE }

    static Stream<Arguments> reasonsKindsModes() {
        List<Arguments> all = new ArrayList<>();
        for (EndReason reason : List.of(EndReason.EXHAUSTED, EndReason.NOT_RETRYABLE, EndReason.DEADLINE,
                EndReason.BUDGET, EndReason.CIRCUIT_OPEN, EndReason.THROTTLED)) {
            for (Kind kind : Kind.values()) {
                all.add(Arguments.of(reason, kind, false));
                all.add(Arguments.of(reason, kind, true));
            }
        }
        return all.stream();
    }

    @ParameterizedTest(name = "{0} answered by {1}, async={2}")
    @MethodSource("reasonsKindsModes")
    void everyEndReasonIsAnsweredByEveryKindOfFallback(EndReason reason, Kind kind, boolean async) throws Exception {
        Retry retry = endingWith(reason);
        FallbackCache<String, String> cache = FallbackCache.<String, String>builder("prices")
                .maxStaleness(Duration.ofMinutes(10)).clock(clock).build();
        cache.put("ACME", "41.50");
        clock.advance(Duration.ofMinutes(2));

        Object answer;
        Throwable thrown;
        switch (kind) {
            case CUSTOM: {
                Retry withFallback = retry.withFallback(Fallback.of(context -> {
                    fallbackRuns.incrementAndGet();
                    return "default for " + context.reason();
                }));
                answer = async ? settle(withFallback.callAsync(this::failingAsync)) : withFallback.call(this::failing);
                assertThat(answer).isEqualTo("default for " + reason);
                assertThat(fallbackRuns).hasValue(1);
                break;
            }
            case CACHE: {
                Cached<String> cached = async ? settle(cache.callAsync(retry, "ACME", this::failingAsync))
                        : cache.call(retry, "ACME", this::failing);
                assertThat(cached.value()).isEqualTo("41.50");
                assertThat(cached.isStale()).isTrue();
                assertThat(cached.staleBecause()).contains(reason);
                assertThat(cached.age()).isGreaterThanOrEqualTo(Duration.ofMinutes(2));
                break;
            }
            case MESSAGE: {
                Retry withFallback = retry.withFallback(Fallback.message("Prices are unavailable right now."));
                thrown = async ? catchThrowable(() -> settle(withFallback.callAsync(this::failingAsync)))
                        : catchThrowable(() -> withFallback.call(this::failing));
                assertThat(thrown).isInstanceOf(UserFacingException.class)
                        .hasMessage("Prices are unavailable right now.");
                UserFacingException message = (UserFacingException) thrown;
                assertThat(message.reason()).isEqualTo(reason);
                assertThat(message.toString()).doesNotContain("10.0.0.7").doesNotContain("IOException");
                assertThat(message.getSuppressed()).hasSize(1);
                if (reason == EndReason.CIRCUIT_OPEN) {
                    assertThat(message.retryIn()).isPresent();
                    assertThat(message.retryAt()).contains(Instant.ofEpochMilli(clock.currentTimeMillis())
                            .plus(message.retryIn().get()));
                } else {
                    // nothing says when: a throttle's refusals end as outcomes come in, not at a time
                    assertThat(message.retryIn()).isEmpty();
                }
                break;
            }
            default:
                throw new AssertionError(kind);
        }
        RetryEvent.CallFinished end = events.onlyFinish();
        assertThat(end.reason()).isEqualTo(reason);
        assertThat(end.servedByFallback()).isTrue();
        assertThat(end.fallback().kind()).isEqualTo(kind.name().toLowerCase(java.util.Locale.ROOT));
    }

    private <T> T settle(CompletableFuture<T> future) throws Exception {
        clock.runUntilIdle();
        assertThat(future).isDone();
        try {
            return future.join();
        } catch (CompletionException e) {
            throw (Exception) e.getCause();
        }
    }

    @Test
    void neverRunsForAFirstAttemptThatSucceeds() throws Exception {
        Retry retry = endingWith(EndReason.EXHAUSTED).withFallback(Fallback.of(c -> {
            fallbackRuns.incrementAndGet();
            return "fallback";
        }));

        assertThat(retry.call(() -> "fresh")).isEqualTo("fresh");
        assertThat(fallbackRuns).hasValue(0);
        assertThat(events.onlyFinish().fallback()).isNull();
    }

    @Test
    void neverRunsForACallThatRecovers() throws Exception {
        Retry retry = endingWith(EndReason.EXHAUSTED).withFallback(Fallback.of(c -> {
            fallbackRuns.incrementAndGet();
            return "fallback";
        }));

        String result = retry.call(() -> {
            if (calls.incrementAndGet() < 2) {
                throw new IOException("once");
            }
            return "fresh";
        });

        assertThat(result).isEqualTo("fresh");
        assertThat(fallbackRuns).hasValue(0);
        assertThat(events.onlyFinish().reason()).isEqualTo(EndReason.RECOVERED);
    }

    @Test
    void neverRunsForACancelledAsyncCall() {
        Retry retry = endingWith(EndReason.EXHAUSTED).withFallback(Fallback.of(c -> {
            fallbackRuns.incrementAndGet();
            return "fallback";
        }));

        CompletableFuture<String> future = retry.callAsync(this::failingAsync);
        future.cancel(true);
        clock.runUntilIdle();

        assertThat(fallbackRuns).hasValue(0);
        assertThat(events.onlyFinish().reason()).isEqualTo(EndReason.CANCELLED);
    }

    @Test
    void doesNotRunForAnInterruptedCallUnlessChosen() {
        Retry retry = endingWith(EndReason.EXHAUSTED).withFallback(Fallback.of(c -> {
            fallbackRuns.incrementAndGet();
            return "fallback";
        }));

        catchThrowable(() -> retry.call(() -> {
            Thread.currentThread().interrupt();
            throw new IOException("down");
        }));

        assertThat(fallbackRuns).hasValue(0);
        assertThat(events.onlyFinish().reason()).isEqualTo(EndReason.INTERRUPTED);
    }

    @Test
    void runsForAnInterruptedCallWhenChosen() throws Exception {
        Retry retry = endingWith(EndReason.EXHAUSTED).withFallback(Fallback.of(c -> "fallback")
                .withReasons(EndReason.INTERRUPTED));

        Object result = retry.call(() -> {
            Thread.currentThread().interrupt();
            throw new IOException("down");
        });

        assertThat(result).isEqualTo("fallback");
        assertThat(Thread.currentThread().isInterrupted()).as("the interrupt status is kept").isTrue();
    }

    @Test
    void runsOnlyForTheChosenReasons() {
        Retry retry = endingWith(EndReason.EXHAUSTED).withFallback(Fallback.of(c -> "fallback")
                .withReasons(EndReason.CIRCUIT_OPEN));

        Throwable thrown = catchThrowable(() -> retry.call(this::failing));

        assertThat(thrown).isInstanceOf(IOException.class);
        assertThat(events.onlyFinish().failure()).isSameAs(thrown);
        assertThat(events.onlyFinish().fallback()).isNull();
    }

    @Test
    void runsOnlyForTheChosenFailureTypes() throws Exception {
        Retry retry = endingWith(EndReason.EXHAUSTED).withFallback(Fallback.of(c -> "fallback")
                .withFailureTypes(IllegalStateException.class));

        Throwable thrown = catchThrowable(() -> retry.call(this::failing));
        Object served = retry.call(() -> {
            throw new IllegalStateException("broken");
        });

        assertThat(thrown).isInstanceOf(IOException.class);
        assertThat(served).isEqualTo("fallback");
    }

    @Test
    void aFailureTypeMatchesTheRefusalTheCallerWouldReceive() throws Exception {
        Retry retry = endingWith(EndReason.CIRCUIT_OPEN).withFallback(Fallback.of(c -> "fallback")
                .withFailureTypes(CircuitOpenException.class));

        assertThat(retry.call(this::failing)).isEqualTo("fallback");
    }

    @Test
    void receivesTheEndReasonTheLastFailureAndTheAttemptCount() throws Exception {
        List<FallbackContext> seen = new ArrayList<>();
        Retry retry = endingWith(EndReason.EXHAUSTED).withFallback(Fallback.of(c -> {
            seen.add(c);
            return "fallback";
        }));

        retry.call(this::failing);

        FallbackContext context = seen.get(0);
        assertThat(context.reason()).isEqualTo(EndReason.EXHAUSTED);
        assertThat(context.attempts()).isEqualTo(3);
        assertThat(context.lastFailure()).get().isInstanceOf(IOException.class);
        assertThat(context.failure()).containsSame(context.lastFailure().get());
        assertThat(context.lastResult()).isEmpty();
        assertThat(context.name()).isEqualTo("prices");
    }

    @Test
    void receivesTheLastResultWhenAResultWasBeingRetried() throws Exception {
        List<FallbackContext> seen = new ArrayList<>();
        Retry retry = Retry.of("status", fixed(2).retryOnResult(Integer.class, status -> status == 503).build())
                .withClock(clock).withFallback(Fallback.of(c -> {
                    seen.add(c);
                    return 200;
                }));

        Object result = retry.call(() -> 503);

        assertThat(result).isEqualTo(200);
        assertThat(seen.get(0).lastResult()).contains(503);
        assertThat(seen.get(0).failure()).isEmpty();
    }

    @Test
    void itsOwnFailureIsThrownWithTheCallsFailureSuppressed() {
        IllegalStateException own = new IllegalStateException("fallback broke");
        Retry retry = endingWith(EndReason.EXHAUSTED).withFallback(Fallback.of(c -> {
            fallbackRuns.incrementAndGet();
            throw own;
        }));

        Throwable thrown = catchThrowable(() -> retry.call(this::failing));

        assertThat(thrown).isSameAs(own);
        assertThat(own.getSuppressed()).hasSize(1);
        assertThat(own.getSuppressed()[0]).isInstanceOf(IOException.class);
        assertThat(fallbackRuns).as("never retried, never run twice").hasValue(1);
        assertThat(events.onlyFinish().fallback().outcome()).isEqualTo(RetryEvent.FallbackRun.Outcome.FAILED);
        assertThat(events.onlyFinish().failure()).isSameAs(own);
    }

    @Test
    void itsOwnFailureFailsTheAsyncFutureWithTheCallsFailureSuppressed() {
        IllegalStateException own = new IllegalStateException("fallback broke");
        Retry retry = endingWith(EndReason.EXHAUSTED).withFallback(Fallback.of(c -> {
            throw own;
        }));

        Throwable thrown = catchThrowable(() -> settle(retry.callAsync(this::failingAsync)));

        assertThat(thrown).isSameAs(own);
        assertThat(own.getSuppressed()[0]).isInstanceOf(IOException.class);
    }

    @Test
    void aDecliningFallbackLeavesTheCallsFailureAndIsReportedAsDeclined() {
        Retry retry = endingWith(EndReason.EXHAUSTED).withFallback(Fallback.ofOptional(c -> java.util.Optional.empty()));

        Throwable thrown = catchThrowable(() -> retry.call(this::failing));

        assertThat(thrown).isInstanceOf(IOException.class);
        assertThat(events.onlyFinish().failure()).isSameAs(thrown);
        assertThat(events.onlyFinish().fallback().outcome()).isEqualTo(RetryEvent.FallbackRun.Outcome.DECLINED);
        assertThat(events.onlyFinish().servedByFallback()).isFalse();
    }

    @Test
    void theNextFallbackAnswersWhenTheFirstDeclines() throws Exception {
        Retry retry = endingWith(EndReason.EXHAUSTED).withFallback(
                Fallback.<String>ofOptional(c -> java.util.Optional.empty()).orElse(Fallback.of(c -> "second")));

        assertThat(retry.call(this::failing)).isEqualTo("second");
    }

    @Test
    void aCacheMissFallsThroughToTheRetrysOwnFallback() {
        FallbackCache<String, String> cache = FallbackCache.<String, String>builder("prices").clock(clock).build();
        Retry retry = endingWith(EndReason.EXHAUSTED).withFallback(Fallback.message("Try again later."));

        Throwable thrown = catchThrowable(() -> cache.call(retry, "ACME", this::failing));

        assertThat(thrown).isInstanceOf(UserFacingException.class).hasMessage("Try again later.");
        assertThat(events.onlyFinish().fallback().kind()).isEqualTo("message");
    }

    @Test
    void aMessageSaysWhenTheBreakerLetsTheNextProbeThrough() {
        Retry retry = endingWith(EndReason.CIRCUIT_OPEN).withFallback(Fallback.message("Back soon."));
        clock.advance(Duration.ofSeconds(10));

        UserFacingException message = (UserFacingException) catchThrowable(() -> retry.call(this::failing));

        assertThat(message.retryIn()).contains(OPEN.minusSeconds(10));
    }

    @Test
    void theEndEventIsReportedOnceAfterTheFallbackRan() throws Exception {
        List<String> order = new ArrayList<>();
        Retry retry = endingWith(EndReason.EXHAUSTED).withListener(new RetryListener() {
            @Override
            public void onCallFinished(RetryEvent.CallFinished event) {
                order.add("end " + event.result());
            }
        }).withFallback(Fallback.of(c -> {
            order.add("fallback");
            return "stale";
        }));

        retry.call(this::failing);

        assertThat(order).containsExactly("fallback", "end stale");
    }

    @Test
    void refusesReasonsAFallbackNeverRunsFor() {
        Fallback<String> fallback = Fallback.of(c -> "x");

        assertThatThrownBy(() -> fallback.withReasons(EndReason.SUCCESS))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("SUCCESS");
        assertThatThrownBy(() -> fallback.withReasons(EndReason.CANCELLED))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("CANCELLED");
    }

    @Test
    void refusesAKindThatIsNotAShortWord() {
        assertThatThrownBy(() -> Fallback.of(c -> "x").withKind("Not A Word"))
                .isInstanceOf(IllegalArgumentException.class).hasMessage(
                        "kind must be a lower-case word of at most 32 characters, got 'Not A Word'");
    }

    @Test
    void runsOnlyWhenItsConditionHolds() throws Exception {
        Retry retry = endingWith(EndReason.EXHAUSTED).withFallback(Fallback.of(c -> "fallback")
                .when(c -> c.attempts() > 3));

        Throwable thrown = catchThrowable(() -> retry.call(this::failing));

        assertThat(thrown).isInstanceOf(IOException.class);
        assertThat(events.onlyFinish().fallback()).isNull();
    }

    @Test
    void aConditionThatThrowsFailsTheCallLikeTheFallbackThrowing() {
        IllegalStateException broken = new IllegalStateException("condition broke");
        Retry retry = endingWith(EndReason.EXHAUSTED).withFallback(Fallback.of(c -> "fallback").when(c -> {
            throw broken;
        }));

        Throwable thrown = catchThrowable(() -> retry.call(this::failing));

        assertThat(thrown).isSameAs(broken);
        assertThat(broken.getSuppressed()[0]).isInstanceOf(IOException.class);
        assertThat(events.onlyFinish().fallback().outcome()).isEqualTo(RetryEvent.FallbackRun.Outcome.FAILED);
    }

    @Test
    void answersGetWithItsValue() {
        Retry retry = endingWith(EndReason.EXHAUSTED).withFallback(Fallback.of(c -> "fallback"));

        Object answer = retry.get(() -> {
            throw new IllegalStateException("down");
        });

        assertThat(answer).isEqualTo("fallback");
    }

    @Test
    void answersRunSoThatItReturnsNormally() {
        Retry retry = endingWith(EndReason.EXHAUSTED).withFallback(Fallback.of(c -> {
            fallbackRuns.incrementAndGet();
            return null;
        }));

        retry.run(() -> {
            throw new IllegalStateException("down");
        });

        assertThat(fallbackRuns).hasValue(1);
        assertThat(events.onlyFinish().servedByFallback()).isTrue();
    }
}
