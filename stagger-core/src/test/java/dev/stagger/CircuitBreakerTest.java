package dev.stagger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;

import dev.stagger.CircuitBreaker.State;
import dev.stagger.testing.VirtualClock;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class CircuitBreakerTest {
    private final VirtualClock clock = new VirtualClock();
    private final List<CircuitBreaker.Transition> transitions = new CopyOnWriteArrayList<>();
    private final AtomicInteger invoked = new AtomicInteger();

    private CircuitBreaker.Builder breaker() {
        return CircuitBreaker.builder("payments").clock(clock).listener(transitions::add);
    }

    private static void fail(CircuitBreaker breaker, int times) {
        for (int i = 0; i < times; i++) {
            assertThat(breaker.tryAcquirePermission()).isTrue();
            breaker.record(null, new IOException("down"), -1);
        }
    }

    private static void succeed(CircuitBreaker breaker, int times) {
        for (int i = 0; i < times; i++) {
            assertThat(breaker.tryAcquirePermission()).isTrue();
            breaker.record("ok", null, -1);
        }
    }

    private String invoke() {
        invoked.incrementAndGet();
        return "ok";
    }

    // ---- tripping on the failure rate ----

    @Test
    void staysClosedBelowMinimumCallsEvenWhenEveryCallFails() {
        CircuitBreaker breaker = breaker().minimumCalls(10).build();

        fail(breaker, 9);

        assertThat(breaker.state()).isEqualTo(State.CLOSED);
        fail(breaker, 1);
        assertThat(breaker.state()).isEqualTo(State.OPEN);
    }

    @Test
    void tripsWhenTheFailureRateReachesTheThresholdOnceMinimumCallsWereSeen() {
        CircuitBreaker breaker = breaker().minimumCalls(10).failureRateThreshold(0.5).build();
        succeed(breaker, 5);
        fail(breaker, 4);
        assertThat(breaker.state()).isEqualTo(State.CLOSED);

        fail(breaker, 1); // 5 of 10 = 50 %

        assertThat(breaker.state()).isEqualTo(State.OPEN);
    }

    @Test
    void staysClosedWhileTheFailureRateIsBelowTheThreshold() {
        CircuitBreaker breaker = breaker().minimumCalls(10).failureRateThreshold(0.5).build();

        succeed(breaker, 6);
        fail(breaker, 4);

        assertThat(breaker.state()).isEqualTo(State.CLOSED);
        assertThat(breaker.metrics().failureRate()).isEqualTo(0.4);
    }

    @Test
    void outcomesOlderThanTheWindowNoLongerCount() {
        CircuitBreaker breaker = breaker().window(Duration.ofSeconds(10)).minimumCalls(4).build();
        fail(breaker, 3);

        clock.advance(Duration.ofSeconds(11));
        fail(breaker, 1);

        assertThat(breaker.state()).isEqualTo(State.CLOSED);
        assertThat(breaker.metrics().calls()).isEqualTo(1);
    }

    @Test
    void outcomesInsideTheWindowAddUpAcrossBuckets() {
        CircuitBreaker breaker = breaker().window(Duration.ofSeconds(10)).buckets(10).minimumCalls(4).build();
        for (int i = 0; i < 3; i++) {
            fail(breaker, 1);
            clock.advance(Duration.ofSeconds(2));
        }

        fail(breaker, 1); // at 6 s: four failures within the last 10 s

        assertThat(breaker.state()).isEqualTo(State.OPEN);
    }

    @Test
    void defaultsTripAtTwentyCallsAndFiftyPercentAndStayOpenThirtySeconds() {
        CircuitBreaker breaker = CircuitBreaker.builder("defaults").clock(clock).build();
        fail(breaker, 19);
        assertThat(breaker.state()).isEqualTo(State.CLOSED);

        fail(breaker, 1);
        assertThat(breaker.state()).isEqualTo(State.OPEN);

        clock.advance(Duration.ofMillis(29_999));
        assertThat(breaker.state()).isEqualTo(State.OPEN);
        clock.advance(Duration.ofMillis(1));
        assertThat(breaker.state()).isEqualTo(State.HALF_OPEN);
    }

    // ---- consecutive failures ----

    @Test
    void tripsAfterNConsecutiveFailures() {
        CircuitBreaker breaker = breaker().consecutiveFailures(3).build();

        fail(breaker, 2);
        assertThat(breaker.state()).isEqualTo(State.CLOSED);
        fail(breaker, 1);

        assertThat(breaker.state()).isEqualTo(State.OPEN);
    }

    @Test
    void aSuccessResetsTheConsecutiveCount() {
        CircuitBreaker breaker = breaker().consecutiveFailures(3).build();

        fail(breaker, 2);
        succeed(breaker, 1);
        fail(breaker, 2);

        assertThat(breaker.state()).isEqualTo(State.CLOSED);
        assertThat(breaker.metrics().consecutiveFailures()).isEqualTo(2);
    }

    @Test
    void consecutiveModeAloneIgnoresTheFailureRate() {
        CircuitBreaker breaker = breaker().consecutiveFailures(3).build();

        for (int i = 0; i < 100; i++) {
            fail(breaker, 2);
            succeed(breaker, 1);
        }

        assertThat(breaker.state()).isEqualTo(State.CLOSED);
    }

    @Test
    void bothModesTogetherTripOnWhicheverComesFirst() {
        CircuitBreaker breaker = breaker().consecutiveFailures(3).failureRateThreshold(0.5).minimumCalls(4).build();
        fail(breaker, 2);
        succeed(breaker, 1);
        fail(breaker, 1); // 3 of 4 failed: the rate trips it before three in a row

        assertThat(breaker.state()).isEqualTo(State.OPEN);
    }

    // ---- open ----

    @Test
    void anOpenBreakerRejectsAtOnceWithoutInvokingTheOperation() {
        CircuitBreaker breaker = breaker().consecutiveFailures(1).openDuration(Duration.ofSeconds(30)).build();
        fail(breaker, 1);
        clock.advance(Duration.ofSeconds(10));

        Throwable thrown = catchThrowable(() -> breaker.call(this::invoke));

        assertThat(thrown).isInstanceOfSatisfying(CircuitOpenException.class, e -> {
            assertThat(e.retryIn()).isEqualTo(Duration.ofSeconds(20));
            assertThat(e.breaker()).isEqualTo("payments");
            assertThat(e.reason()).isEqualTo(EndReason.CIRCUIT_OPEN);
        });
        assertThat(thrown).hasMessageContaining("circuit 'payments' is open");
        assertThat(invoked).hasValue(0);
        assertThat(breaker.metrics().rejected()).isEqualTo(1);
    }

    @Test
    void anOpenBreakerBecomesHalfOpenWhenOpenDurationHasPassed() {
        CircuitBreaker breaker = breaker().consecutiveFailures(1).openDuration(Duration.ofSeconds(5)).build();
        fail(breaker, 1);

        clock.advance(Duration.ofSeconds(5));

        assertThat(breaker.state()).isEqualTo(State.HALF_OPEN);
        assertThat(breaker.tryAcquirePermission()).isTrue();
        assertThat(transitions).extracting(CircuitBreaker.Transition::to).containsExactly(State.OPEN, State.HALF_OPEN);
    }

    @Test
    void anOpenBreakerHalfOpensOnTimeOnAClockWhoseReadingsAreNegative() {
        // System.nanoTime() may be negative: only differences between readings mean anything.
        VirtualClock negative = new VirtualClock(-Duration.ofDays(1).toNanos());
        CircuitBreaker breaker = CircuitBreaker.builder("payments").clock(negative).consecutiveFailures(1)
                .openDuration(Duration.ofSeconds(30)).build();
        fail(breaker, 1);

        negative.advance(Duration.ofSeconds(30));

        assertThat(breaker.state()).isEqualTo(State.HALF_OPEN);
        assertThat(breaker.tryAcquirePermission()).isTrue();
    }

    @Test
    void openBackoffLengthensEachReopeningInARowAndResetsOnClose() {
        CircuitBreaker breaker = breaker().consecutiveFailures(1).openDuration(Duration.ofSeconds(10))
                .openBackoff(Backoff.exponential(Duration.ofSeconds(10)).maxDelay(Duration.ofSeconds(60))).build();

        fail(breaker, 1);
        assertThat(retryIn(breaker)).isEqualTo(Duration.ofSeconds(10));
        reopenWithAFailedProbe(breaker);
        assertThat(retryIn(breaker)).isEqualTo(Duration.ofSeconds(20));
        reopenWithAFailedProbe(breaker);
        assertThat(retryIn(breaker)).isEqualTo(Duration.ofSeconds(40));
        reopenWithAFailedProbe(breaker);
        assertThat(retryIn(breaker)).isEqualTo(Duration.ofSeconds(60));

        clock.advance(Duration.ofSeconds(60));
        succeed(breaker, 1); // the probe succeeds: closed
        assertThat(breaker.state()).isEqualTo(State.CLOSED);
        fail(breaker, 1);
        assertThat(retryIn(breaker)).isEqualTo(Duration.ofSeconds(10));
    }

    private void reopenWithAFailedProbe(CircuitBreaker breaker) {
        clock.advance(retryIn(breaker));
        fail(breaker, 1);
        assertThat(breaker.state()).isEqualTo(State.OPEN);
    }

    private static Duration retryIn(CircuitBreaker breaker) {
        return breaker.openException(null, null).retryIn();
    }

    // ---- half-open ----

    @Test
    void halfOpenAdmitsOnlyItsPermittedProbes() {
        CircuitBreaker breaker = breaker().consecutiveFailures(1).openDuration(Duration.ofSeconds(1)).halfOpenPermits(2).build();
        fail(breaker, 1);
        clock.advance(Duration.ofSeconds(1));

        assertThat(breaker.tryAcquirePermission()).isTrue();
        assertThat(breaker.tryAcquirePermission()).isTrue();
        assertThat(breaker.tryAcquirePermission()).isFalse();
        assertThat(breaker.openException(null, null).retryIn()).isZero();
    }

    @Test
    void aCallerRacingTheMoveToHalfOpenCannotTakeAPermitTheMoverAlsoTakes() {
        // The listener runs on the thread that moved the breaker to HALF_OPEN, right after the
        // move and before that thread returns: exactly where a second caller on another thread
        // can get in. Between them they must still get only the one permitted probe.
        List<Boolean> racerGranted = new CopyOnWriteArrayList<>();
        CircuitBreaker[] self = new CircuitBreaker[1];
        CircuitBreaker breaker = breaker().consecutiveFailures(1).openDuration(Duration.ofSeconds(1)).halfOpenPermits(1)
                .listener(t -> {
                    if (t.to() == State.HALF_OPEN) {
                        racerGranted.add(self[0].tryAcquirePermission());
                    }
                })
                .build();
        self[0] = breaker;
        fail(breaker, 1);
        clock.advance(Duration.ofSeconds(1));

        boolean moverGranted = breaker.tryAcquirePermission();

        assertThat(racerGranted).hasSize(1);
        assertThat(List.of(moverGranted, racerGranted.get(0))).as("probes admitted (mover, racer)")
                .containsOnlyOnce(true);
    }

    @Test
    void halfOpenClosesOnlyWhenEveryProbeSucceeds() {
        CircuitBreaker breaker = breaker().consecutiveFailures(1).openDuration(Duration.ofSeconds(1)).halfOpenPermits(2).build();
        fail(breaker, 1);
        clock.advance(Duration.ofSeconds(1));

        succeed(breaker, 1);
        assertThat(breaker.state()).isEqualTo(State.HALF_OPEN);
        succeed(breaker, 1);

        assertThat(breaker.state()).isEqualTo(State.CLOSED);
    }

    @Test
    void aFailedProbeReopensTheBreaker() {
        CircuitBreaker breaker = breaker().consecutiveFailures(1).openDuration(Duration.ofSeconds(1)).halfOpenPermits(2).build();
        fail(breaker, 1);
        clock.advance(Duration.ofSeconds(1));

        succeed(breaker, 1);
        fail(breaker, 1);

        assertThat(breaker.state()).isEqualTo(State.OPEN);
        assertThat(transitions).extracting(CircuitBreaker.Transition::to)
                .containsExactly(State.OPEN, State.HALF_OPEN, State.OPEN);
    }

    @Test
    void closingStartsWithFreshCounts() {
        CircuitBreaker breaker = breaker().minimumCalls(4).openDuration(Duration.ofSeconds(1)).build();
        fail(breaker, 4);
        clock.advance(Duration.ofSeconds(1));
        succeed(breaker, 1);

        assertThat(breaker.state()).isEqualTo(State.CLOSED);
        assertThat(breaker.metrics().calls()).isZero();
        fail(breaker, 3);
        assertThat(breaker.state()).isEqualTo(State.CLOSED);
    }

    // ---- what counts as a failure ----

    @Test
    void slowCallsCountAsFailures() throws Exception {
        CircuitBreaker breaker = breaker().consecutiveFailures(2).failureRateThreshold(1.0).minimumCalls(100)
                .slowCallThreshold(Duration.ofSeconds(1)).build();

        breaker.call(() -> {
            clock.advance(Duration.ofSeconds(2));
            return "slow but fine";
        });

        assertThat(breaker.metrics().failures()).isEqualTo(1);
        assertThat(breaker.metrics().slowCalls()).isEqualTo(1);
        assertThat(breaker.metrics().consecutiveFailures()).isEqualTo(1);
        breaker.call(() -> {
            clock.advance(Duration.ofMillis(1500));
            return "slow again";
        });
        assertThat(breaker.state()).isEqualTo(State.OPEN);
    }

    @Test
    void fastCallsAreNotSlowCalls() throws Exception {
        CircuitBreaker breaker = breaker().slowCallThreshold(Duration.ofSeconds(1)).build();

        breaker.call(() -> {
            clock.advance(Duration.ofMillis(999));
            return "fast enough";
        });

        assertThat(breaker.metrics().failures()).isZero();
        assertThat(breaker.metrics().slowCalls()).isZero();
        assertThat(breaker.metrics().calls()).isEqualTo(1);
    }

    @Test
    void recordFailuresCountsOnlyWhatTheClassifierWouldRetry() {
        Classifier transientOnly = (result, failure, context) ->
                failure instanceof IOException ? Decision.retry() : failure != null ? Decision.stop() : Decision.accept();
        CircuitBreaker breaker = breaker().consecutiveFailures(2).recordFailures(transientOnly).build();

        for (int i = 0; i < 5; i++) {
            assertThatThrownBy(() -> breaker.call(() -> {
                throw new IllegalArgumentException("404: not the downstream being sick");
            })).isInstanceOf(IllegalArgumentException.class);
        }
        assertThat(breaker.state()).isEqualTo(State.CLOSED);

        for (int i = 0; i < 2; i++) {
            catchThrowable(() -> breaker.call(() -> {
                throw new IOException("connection refused");
            }));
        }
        assertThat(breaker.state()).isEqualTo(State.OPEN);
    }

    @Test
    void recordFailureCanCountResultsAsFailures() throws Exception {
        CircuitBreaker breaker = breaker().consecutiveFailures(2)
                .recordFailure((result, failure) -> failure != null || Integer.valueOf(503).equals(result)).build();

        breaker.call(() -> 503);
        breaker.call(() -> 503);

        assertThat(breaker.state()).isEqualTo(State.OPEN);
    }

    // ---- standalone use ----

    @Test
    void callReturnsTheOperationsResultWhenClosed() throws Exception {
        CircuitBreaker breaker = breaker().build();

        assertThat(breaker.call(this::invoke)).isEqualTo("ok");
        assertThat(breaker.metrics().calls()).isEqualTo(1);
    }

    @Test
    void callRethrowsTheOperationsFailureUnchangedAndRecordsIt() {
        CircuitBreaker breaker = breaker().build();
        IOException failure = new IOException("down");

        assertThatThrownBy(() -> breaker.call(() -> {
            throw failure;
        })).isSameAs(failure);
        assertThat(breaker.metrics().failures()).isEqualTo(1);
    }

    // ---- events, metrics, reset ----

    @Test
    void everyTransitionIsReportedInOrderWithTheBreakersName() {
        CircuitBreaker breaker = breaker().consecutiveFailures(1).openDuration(Duration.ofSeconds(1)).build();

        fail(breaker, 1);
        clock.advance(Duration.ofSeconds(1));
        succeed(breaker, 1);

        assertThat(transitions).extracting(t -> t.from() + "->" + t.to())
                .containsExactly("CLOSED->OPEN", "OPEN->HALF_OPEN", "HALF_OPEN->CLOSED");
        assertThat(transitions).allSatisfy(t -> assertThat(t.breaker()).isEqualTo("payments"));
        assertThat(transitions.get(1).atNanos()).isEqualTo(Duration.ofSeconds(1).toNanos());
    }

    @Test
    void aThrowingTransitionListenerDoesNotBreakTheBreaker() {
        CircuitBreaker breaker = breaker().consecutiveFailures(1).build();
        breaker.addListener(t -> {
            throw new IllegalStateException("listener bug");
        });

        fail(breaker, 1);

        assertThat(breaker.state()).isEqualTo(State.OPEN);
        assertThat(transitions).hasSize(1);
    }

    @Test
    void metricsReportTheWindowsCountsAndTheBreakersHistory() {
        CircuitBreaker breaker = breaker().minimumCalls(100).consecutiveFailures(10).failureRateThreshold(0.9).build();
        succeed(breaker, 3);
        fail(breaker, 1);

        CircuitBreaker.Metrics metrics = breaker.metrics();

        assertThat(metrics.state()).isEqualTo(State.CLOSED);
        assertThat(metrics.calls()).isEqualTo(4);
        assertThat(metrics.failures()).isEqualTo(1);
        assertThat(metrics.failureRate()).isEqualTo(0.25);
        assertThat(metrics.consecutiveFailures()).isEqualTo(1);
        assertThat(metrics.rejected()).isZero();
        assertThat(metrics.transitions()).isZero();
    }

    @Test
    void metricsCountRejectionsAndTransitions() {
        CircuitBreaker breaker = breaker().consecutiveFailures(1).build();
        fail(breaker, 1);
        breaker.tryAcquirePermission();
        breaker.tryAcquirePermission();

        assertThat(breaker.metrics().state()).isEqualTo(State.OPEN);
        assertThat(breaker.metrics().rejected()).isEqualTo(2);
        assertThat(breaker.metrics().transitions()).isEqualTo(1);
    }

    @Test
    void resetClosesAnOpenBreakerWithFreshCounts() {
        CircuitBreaker breaker = breaker().consecutiveFailures(2).build();
        fail(breaker, 2);

        breaker.reset();

        assertThat(breaker.state()).isEqualTo(State.CLOSED);
        assertThat(breaker.metrics().consecutiveFailures()).isZero();
        assertThat(transitions).extracting(t -> t.from() + "->" + t.to()).containsExactly("CLOSED->OPEN", "OPEN->CLOSED");
    }
}
