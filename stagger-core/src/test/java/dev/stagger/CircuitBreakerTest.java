package dev.stagger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;

import dev.stagger.CircuitBreaker.State;
import dev.stagger.testing.VirtualClock;
import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class CircuitBreakerTest {
    private final VirtualClock clock = new VirtualClock();
    private final List<CircuitBreaker.Transition> transitions = new CopyOnWriteArrayList<>();
    private final AtomicInteger invoked = new AtomicInteger();

    private CircuitBreaker.Builder breaker() {
        return CircuitBreaker.builder("payments").clock(clock);
    }

    private CircuitBreaker watched(CircuitBreaker breaker) {
        breaker.subscribe(transitions::add);
        return breaker;
    }

    private static void fail(CircuitBreaker breaker, int times) {
        for (int i = 0; i < times; i++) {
            CircuitBreaker.Permit permit = breaker.tryAcquirePermission();
            assertThat(permit.isGranted()).isTrue();
            breaker.record(permit, null, new IOException("down"));
        }
    }

    private static void succeed(CircuitBreaker breaker, int times) {
        for (int i = 0; i < times; i++) {
            CircuitBreaker.Permit permit = breaker.tryAcquirePermission();
            assertThat(permit.isGranted()).isTrue();
            breaker.record(permit, "ok", null);
        }
    }

    private String invoke() {
        invoked.incrementAndGet();
        return "ok";
    }

    // ---- tripping on the failure rate ----

    @Test
    void staysClosedBelowMinimumCallsEvenWhenEveryCallFails() {
        CircuitBreaker breaker = watched(breaker().minimumCalls(10).build());

        fail(breaker, 9);

        assertThat(breaker.state()).isEqualTo(State.CLOSED);
        fail(breaker, 1);
        assertThat(breaker.state()).isEqualTo(State.OPEN);
    }

    @Test
    void tripsWhenTheFailureRateReachesTheThresholdOnceMinimumCallsWereSeen() {
        CircuitBreaker breaker = watched(breaker().minimumCalls(10).failureRateThreshold(0.5).build());
        succeed(breaker, 5);
        fail(breaker, 4);
        assertThat(breaker.state()).isEqualTo(State.CLOSED);

        fail(breaker, 1); // 5 of 10 = 50 %

        assertThat(breaker.state()).isEqualTo(State.OPEN);
    }

    @Test
    void staysClosedWhileTheFailureRateIsBelowTheThreshold() {
        CircuitBreaker breaker = watched(breaker().minimumCalls(10).failureRateThreshold(0.5).build());

        succeed(breaker, 6);
        fail(breaker, 4);

        assertThat(breaker.state()).isEqualTo(State.CLOSED);
        assertThat(breaker.metrics().failureRate()).isEqualTo(0.4);
    }

    @Test
    void theRateIsEvaluatedOnSuccessesToo() {
        // The fifth outcome reaches minimumCalls: 3 failures of 5 is 60 %, over the threshold,
        // though that outcome is a success.
        CircuitBreaker breaker = watched(breaker().minimumCalls(5).failureRateThreshold(0.5).build());

        fail(breaker, 3);
        succeed(breaker, 1);
        assertThat(breaker.state()).isEqualTo(State.CLOSED);
        succeed(breaker, 1);

        assertThat(breaker.state()).isEqualTo(State.OPEN);
    }

    @ParameterizedTest
    @CsvSource({"0.07, 7", "0.14, 14", "0.28, 28", "0.55, 55", "0.56, 56"})
    void aThresholdIsComparedExactlyAsTheDecimalWritten(double threshold, int failures) {
        // 0.07 × 100 is 7.000000000000001 in doubles: a product of doubles misses 7 failures in 100.
        CircuitBreaker breaker = watched(breaker().minimumCalls(100).failureRateThreshold(threshold).build());

        succeed(breaker, 100 - failures);
        fail(breaker, failures - 1);
        assertThat(breaker.state()).isEqualTo(State.CLOSED);
        fail(breaker, 1);

        assertThat(breaker.state()).isEqualTo(State.OPEN);
    }

    @Test
    void outcomesOlderThanTheWindowNoLongerCount() {
        CircuitBreaker breaker = watched(breaker().window(Duration.ofSeconds(10)).minimumCalls(4).build());
        fail(breaker, 3);

        clock.advance(Duration.ofSeconds(11));
        fail(breaker, 1);

        assertThat(breaker.state()).isEqualTo(State.CLOSED);
        assertThat(breaker.metrics().calls()).isEqualTo(1);
    }

    @Test
    void outcomesInsideTheWindowAddUpAcrossBuckets() {
        CircuitBreaker breaker = watched(breaker().window(Duration.ofSeconds(10)).buckets(10).minimumCalls(4).build());
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
        CircuitBreaker breaker = watched(breaker().consecutiveFailures(3).build());

        fail(breaker, 2);
        assertThat(breaker.state()).isEqualTo(State.CLOSED);
        fail(breaker, 1);

        assertThat(breaker.state()).isEqualTo(State.OPEN);
    }

    @Test
    void aSuccessResetsTheConsecutiveCount() {
        CircuitBreaker breaker = watched(breaker().consecutiveFailures(3).build());

        fail(breaker, 2);
        succeed(breaker, 1);
        fail(breaker, 2);

        assertThat(breaker.state()).isEqualTo(State.CLOSED);
        assertThat(breaker.metrics().consecutiveFailures()).isEqualTo(2);
    }

    @Test
    void consecutiveModeAloneIgnoresTheFailureRate() {
        CircuitBreaker breaker = watched(breaker().consecutiveFailures(3).build());

        for (int i = 0; i < 100; i++) {
            fail(breaker, 2);
            succeed(breaker, 1);
        }

        assertThat(breaker.state()).isEqualTo(State.CLOSED);
    }

    @Test
    void bothModesTogetherTripOnWhicheverComesFirst() {
        CircuitBreaker breaker = watched(breaker().consecutiveFailures(3).failureRateThreshold(0.5).minimumCalls(4).build());
        fail(breaker, 2);
        succeed(breaker, 1);
        fail(breaker, 1); // 3 of 4 failed: the rate trips it before three in a row

        assertThat(breaker.state()).isEqualTo(State.OPEN);
    }

    // ---- open ----

    @Test
    void anOpenBreakerRejectsAtOnceWithoutInvokingTheOperation() {
        CircuitBreaker breaker = watched(breaker().consecutiveFailures(1).openDuration(Duration.ofSeconds(30)).build());
        fail(breaker, 1);
        clock.advance(Duration.ofSeconds(10));

        Throwable thrown = catchThrowable(() -> breaker.call(this::invoke));

        assertThat(thrown).isInstanceOfSatisfying(CircuitOpenException.class, e -> {
            assertThat(e.retryIn()).isEqualTo(Duration.ofSeconds(20));
            assertThat(e.circuitBreakerName()).isEqualTo("payments");
            assertThat(e.reason()).isEqualTo(EndReason.CIRCUIT_OPEN);
        });
        assertThat(thrown).hasMessageContaining("circuit 'payments' is open");
        assertThat(invoked).hasValue(0);
        assertThat(breaker.metrics().rejected()).isEqualTo(1);
    }

    @Test
    void anOpenBreakerBecomesHalfOpenWhenOpenDurationHasPassed() {
        CircuitBreaker breaker = watched(breaker().consecutiveFailures(1).openDuration(Duration.ofSeconds(5)).build());
        fail(breaker, 1);

        clock.advance(Duration.ofSeconds(5));

        assertThat(breaker.state()).isEqualTo(State.HALF_OPEN);
        assertThat(breaker.tryAcquirePermission().isGranted()).isTrue();
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
        assertThat(breaker.tryAcquirePermission().isGranted()).isTrue();
    }

    @Test
    void aSuccessThatBringsTheCallsToTheMinimumTripsWhenTheRateIsAtTheThreshold() {
        // the rule is checked after every outcome: 2 failures in 3 calls are under the minimum of 4;
        // the success that makes 4 calls leaves a rate of 2/4, at the threshold of 1/2 (and no
        // failure in a row to clear: the success path's own decision)
        CircuitBreaker breaker = watched(breaker().minimumCalls(4).failureRateThreshold(0.5).build());
        fail(breaker, 2);
        succeed(breaker, 1);
        assertThat(breaker.state()).isEqualTo(State.CLOSED);

        succeed(breaker, 1);

        assertThat(breaker.state()).isEqualTo(State.OPEN);
    }

    @Test
    void aSuccessTripsWhenTheWindowMovedOnAndLeftTheRateOverTheThreshold() {
        // the successes that kept the rate low leave the window; the next outcome, a success, is
        // judged on what remains (3 failures and a success, then the success: 3 of 5)
        CircuitBreaker breaker = watched(breaker().minimumCalls(4).failureRateThreshold(0.5)
                .window(Duration.ofSeconds(10)).buckets(10).build());
        succeed(breaker, 10);
        clock.advance(Duration.ofSeconds(5));
        fail(breaker, 3);
        succeed(breaker, 1);
        assertThat(breaker.state()).isEqualTo(State.CLOSED); // 3 of 14
        clock.advance(Duration.ofSeconds(6)); // the 10 successes leave the window

        succeed(breaker, 1);

        assertThat(breaker.state()).isEqualTo(State.OPEN);
    }

    @Test
    void theWindowMovesOnTimeAtEveryClockReadingALongCanHold() {
        // Buckets are found by comparing a reading with the last reading of the current period
        // (no division per call): that bound must be right for negative readings and at the top.
        for (long start : new long[] {Long.MIN_VALUE + 1, -Duration.ofDays(1).toNanos() - 1, 0,
                Long.MAX_VALUE - Duration.ofMinutes(1).toNanos()}) {
            VirtualClock at = new VirtualClock(start);
            CircuitBreaker breaker = CircuitBreaker.builder("window").clock(at).failureRateThreshold(0.5)
                    .minimumCalls(1000).window(Duration.ofSeconds(10)).buckets(10).build();
            succeed(breaker, 3);
            fail(breaker, 1);
            at.advance(Duration.ofSeconds(5));
            succeed(breaker, 2);
            assertThat(breaker.metrics().calls()).as("start %d: both periods inside the window", start).isEqualTo(6);
            assertThat(breaker.metrics().failures()).as("start %d", start).isEqualTo(1);
            at.advance(Duration.ofSeconds(6));
            assertThat(breaker.metrics().calls()).as("start %d: the first period left the window", start).isEqualTo(2);
            succeed(breaker, 1);
            assertThat(breaker.metrics().calls()).as("start %d", start).isEqualTo(3);
            at.advance(Duration.ofSeconds(20));
            assertThat(breaker.metrics().calls()).as("start %d: everything left the window", start).isZero();
            fail(breaker, 1);
            assertThat(breaker.metrics().failures()).as("start %d: counted in a new period", start).isEqualTo(1);
        }
    }

    @Test
    void aCallAtTheFirstReadingOfAPeriodCountsInThatPeriod() {
        for (long lastOfAPeriod : new long[] {-1, Duration.ofSeconds(1).toNanos() - 1,
                Long.MIN_VALUE / 2 - Math.floorMod(Long.MIN_VALUE / 2, 1_000_000_000L) - 1}) {
            VirtualClock at = new VirtualClock(lastOfAPeriod);
            CircuitBreaker breaker = CircuitBreaker.builder("edge").clock(at).failureRateThreshold(0.5)
                    .minimumCalls(1000).window(Duration.ofSeconds(10)).buckets(10).build();
            succeed(breaker, 1); // the last reading of period P
            at.advance(Duration.ofNanos(1));
            succeed(breaker, 1); // the first reading of period P + 1
            at.advance(Duration.ofSeconds(9).minusNanos(1)); // the last reading of P + 9
            assertThat(breaker.metrics().calls()).as("from %d: P is the window's oldest period", lastOfAPeriod)
                    .isEqualTo(2);
            at.advance(Duration.ofNanos(1)); // the first reading of P + 10
            assertThat(breaker.metrics().calls()).as("from %d: P left, P + 1 stays", lastOfAPeriod).isEqualTo(1);
        }
    }

    @Test
    void openBackoffLengthensEachReopeningInARowAndResetsOnClose() {
        CircuitBreaker breaker = watched(breaker().consecutiveFailures(1).openDuration(Duration.ofSeconds(10))
                .openBackoff(Backoff.exponential(Duration.ofSeconds(10)).maxDelay(Duration.ofSeconds(60))).build());

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

    @Test
    void reopensInARowDrawFromOneDecorrelatedScheduleAsARetryDoes() {
        // Decorrelated jitter is stateful: each wait grows from the previous one. The breaker
        // keeps one schedule across re-opens in a row, so its open periods are the same waits a
        // retry with the same seed would sleep, not the first wait again and again.
        Backoff decorrelated = Backoff.decorrelated(Duration.ofSeconds(10), Duration.ofMinutes(10));
        CircuitBreaker breaker = watched(breaker().consecutiveFailures(1).openDuration(Duration.ofSeconds(1))
                .openBackoff(decorrelated).random(RandomSource.seeded(42)).build());
        RandomSource mirror = RandomSource.seeded(42); // draws what the breaker's random draws
        Backoff.Schedule expected = decorrelated.start(mirror);

        fail(breaker, 1);
        List<Duration> opens = new java.util.ArrayList<>(List.of(retryIn(breaker)));
        for (int i = 0; i < 4; i++) {
            reopenWithAFailedProbe(breaker);
            opens.add(retryIn(breaker));
        }

        List<Duration> waits = new java.util.ArrayList<>();
        for (int k = 1; k <= 5; k++) {
            waits.add(Duration.ofNanos(Math.max(Duration.ofSeconds(1).toNanos(), expected.nextDelayNanos(k))));
        }
        assertThat(opens).isEqualTo(waits);
        assertThat(opens).as("growing, not the first wait repeated").doesNotHaveDuplicates();

        clock.advance(retryIn(breaker));
        succeed(breaker, 1);
        fail(breaker, 1);
        assertThat(retryIn(breaker)).as("closing starts a fresh schedule")
                .isEqualTo(Duration.ofNanos(decorrelated.start(mirror).nextDelayNanos(1)));
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
        CircuitBreaker breaker = watched(breaker().consecutiveFailures(1).openDuration(Duration.ofSeconds(1)).halfOpenPermits(2).build());
        fail(breaker, 1);
        clock.advance(Duration.ofSeconds(1));

        assertThat(breaker.tryAcquirePermission().isGranted()).isTrue();
        assertThat(breaker.tryAcquirePermission().isGranted()).isTrue();
        assertThat(breaker.tryAcquirePermission().isGranted()).isFalse();
        assertThat(breaker.openException(null, null).retryIn()).isZero();
    }

    @Test
    void aCallerRacingTheMoveToHalfOpenCannotTakeAPermitTheMoverAlsoTakes() {
        // The listener runs on the thread that moved the breaker to HALF_OPEN, right after the
        // move and before that thread returns: exactly where a second caller on another thread
        // can get in. Between them they must still get only the one permitted probe.
        List<Boolean> racerGranted = new CopyOnWriteArrayList<>();
        CircuitBreaker breaker = breaker().consecutiveFailures(1).openDuration(Duration.ofSeconds(1)).halfOpenPermits(1)
                .build();
        breaker.subscribe(t -> {
            if (t.to() == State.HALF_OPEN) {
                racerGranted.add(breaker.tryAcquirePermission().isGranted());
            }
        });
        fail(breaker, 1);
        clock.advance(Duration.ofSeconds(1));

        boolean moverGranted = breaker.tryAcquirePermission().isGranted();

        assertThat(racerGranted).hasSize(1);
        assertThat(List.of(moverGranted, racerGranted.get(0))).as("probes admitted (mover, racer)")
                .containsOnlyOnce(true);
    }

    @Test
    void aPermitTakenWhileClosedAndGivenBackLaterDoesNotAddAProbe() {
        CircuitBreaker breaker = watched(breaker().consecutiveFailures(1).openDuration(Duration.ofSeconds(1))
                .halfOpenPermits(1).build());
        CircuitBreaker.Permit takenWhileClosed = breaker.tryAcquirePermission();
        fail(breaker, 1);
        clock.advance(Duration.ofSeconds(1));
        assertThat(breaker.tryAcquirePermission().isGranted()).as("the one probe").isTrue();

        breaker.releasePermission(takenWhileClosed);

        assertThat(breaker.tryAcquirePermission().isGranted()).isFalse();
    }

    @Test
    void aReleasedProbePermitLetsAnotherProbeThrough() {
        CircuitBreaker breaker = watched(breaker().consecutiveFailures(1).openDuration(Duration.ofSeconds(1))
                .halfOpenPermits(1).build());
        fail(breaker, 1);
        clock.advance(Duration.ofSeconds(1));
        CircuitBreaker.Permit probe = breaker.tryAcquirePermission();

        breaker.releasePermission(probe);

        assertThat(breaker.tryAcquirePermission().isGranted()).isTrue();
    }

    @Test
    void theSuccessOfACallAdmittedWhileClosedDoesNotCloseAHalfOpenBreaker() {
        CircuitBreaker breaker = watched(breaker().consecutiveFailures(1).openDuration(Duration.ofSeconds(1))
                .halfOpenPermits(1).build());
        CircuitBreaker.Permit takenWhileClosed = breaker.tryAcquirePermission();
        fail(breaker, 1);
        clock.advance(Duration.ofSeconds(1));
        CircuitBreaker.Permit probe = breaker.tryAcquirePermission();

        breaker.record(takenWhileClosed, "ok", null);
        assertThat(breaker.state()).isEqualTo(State.HALF_OPEN);
        breaker.record(probe, "ok", null);

        assertThat(breaker.state()).isEqualTo(State.CLOSED);
    }

    @Test
    void aFailureOfACallAdmittedBeforeTheBreakerClosedCountsInTheClosedState() {
        CircuitBreaker breaker = watched(breaker().consecutiveFailures(1).openDuration(Duration.ofSeconds(1))
                .halfOpenPermits(1).build());
        CircuitBreaker.Permit takenEarlier = breaker.tryAcquirePermission();
        fail(breaker, 1);
        clock.advance(Duration.ofSeconds(1));
        succeed(breaker, 1); // the probe closes it

        breaker.record(takenEarlier, null, new IOException("late failure"));

        assertThat(breaker.state()).isEqualTo(State.OPEN);
    }

    @Test
    void halfOpenClosesOnlyWhenEveryProbeSucceeds() {
        CircuitBreaker breaker = watched(breaker().consecutiveFailures(1).openDuration(Duration.ofSeconds(1)).halfOpenPermits(2).build());
        fail(breaker, 1);
        clock.advance(Duration.ofSeconds(1));

        succeed(breaker, 1);
        assertThat(breaker.state()).isEqualTo(State.HALF_OPEN);
        succeed(breaker, 1);

        assertThat(breaker.state()).isEqualTo(State.CLOSED);
    }

    @Test
    void aFailedProbeReopensTheBreaker() {
        CircuitBreaker breaker = watched(breaker().consecutiveFailures(1).openDuration(Duration.ofSeconds(1)).halfOpenPermits(2).build());
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
        CircuitBreaker breaker = watched(breaker().minimumCalls(4).openDuration(Duration.ofSeconds(1)).build());
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
        CircuitBreaker breaker = watched(breaker().consecutiveFailures(2).failureRateThreshold(1.0).minimumCalls(100)
                .slowCallThreshold(Duration.ofSeconds(1)).build());

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
        CircuitBreaker breaker = watched(breaker().slowCallThreshold(Duration.ofSeconds(1)).build());

        breaker.call(() -> {
            clock.advance(Duration.ofMillis(999));
            return "fast enough";
        });

        assertThat(breaker.metrics().failures()).isZero();
        assertThat(breaker.metrics().slowCalls()).isZero();
        assertThat(breaker.metrics().calls()).isEqualTo(1);
    }

    @Test
    void theFailurePredicateDecidesWhatCountsAsAFailure() {
        CircuitBreaker breaker = watched(breaker().consecutiveFailures(2)
                .failurePredicate((result, failure) -> failure instanceof IOException).build());

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
    void theFailurePredicateCanCountResultsAsFailures() throws Exception {
        CircuitBreaker breaker = watched(breaker().consecutiveFailures(2)
                .failurePredicate((result, failure) -> failure != null || Integer.valueOf(503).equals(result)).build());

        breaker.call(() -> 503);
        breaker.call(() -> 503);

        assertThat(breaker.state()).isEqualTo(State.OPEN);
    }

    /** Ignores IllegalArgumentException (the caller's mistake); every other exception is a failure. */
    private static final CircuitBreaker.FailurePredicate IGNORING_BAD_ARGUMENTS = new CircuitBreaker.FailurePredicate() {
        @Override
        public boolean isFailure(Object result, Throwable failure) {
            return failure != null;
        }

        @Override
        public boolean isIgnored(Throwable failure) {
            return failure instanceof IllegalArgumentException;
        }
    };

    @Test
    void anIgnoredFailureCountsAsNeitherASuccessNorAFailure() {
        CircuitBreaker breaker = watched(breaker().consecutiveFailures(2).failurePredicate(IGNORING_BAD_ARGUMENTS).build());

        fail(breaker, 1);
        CircuitBreaker.Permit permit = breaker.tryAcquirePermission();
        breaker.record(permit, null, new IllegalArgumentException("bad id"));
        assertThat(breaker.state()).as("not a second failure").isEqualTo(State.CLOSED);
        fail(breaker, 1);
        assertThat(breaker.state()).as("nor a success ending the streak").isEqualTo(State.OPEN);
    }

    @Test
    void anIgnoredFailureOfAHalfOpenProbeLeavesItsPlaceToAnotherProbe() {
        CircuitBreaker breaker = watched(breaker().consecutiveFailures(1).failurePredicate(IGNORING_BAD_ARGUMENTS).build());
        fail(breaker, 1);
        clock.advance(Duration.ofSeconds(30));

        CircuitBreaker.Permit probe = breaker.tryAcquirePermission();
        breaker.record(probe, null, new IllegalArgumentException("bad id"));

        assertThat(breaker.state()).isEqualTo(State.HALF_OPEN);
        succeed(breaker, 1); // the one probe place is free again
        assertThat(breaker.state()).isEqualTo(State.CLOSED);
    }

    @Test
    void aThrowingFailurePredicateCountsAFailureAndTheOperationsOwnExceptionStillComesOut() {
        IllegalStateException predicateBug = new IllegalStateException("predicate bug");
        CircuitBreaker breaker = watched(breaker().consecutiveFailures(1).failurePredicate((result, failure) -> {
            throw predicateBug;
        }).build());
        IOException down = new IOException("down");

        Throwable thrown = catchThrowable(() -> breaker.call(() -> {
            throw down;
        }));

        assertThat(thrown).isSameAs(down);
        assertThat(down.getSuppressed()).containsExactly(predicateBug);
        assertThat(breaker.state()).as("an outcome the breaker cannot judge counts as a failure").isEqualTo(State.OPEN);
    }

    @Test
    void aThrowingFailurePredicateLeavesAReturnedResultAlone() throws Exception {
        CircuitBreaker breaker = watched(breaker().consecutiveFailures(2).failurePredicate((result, failure) -> {
            throw new IllegalStateException("predicate bug");
        }).build());

        assertThat(breaker.call(() -> "ok")).isEqualTo("ok");
        assertThat(breaker.metrics().consecutiveFailures()).isEqualTo(1);
    }

    // ---- standalone use ----

    @Test
    void theRefusalOfAnOpenBreakerSaysWhenTheNextProbeIsAllowed() {
        CircuitBreaker breaker = watched(breaker().consecutiveFailures(1).build());
        fail(breaker, 1);
        clock.advance(Duration.ofSeconds(10));

        CircuitOpenException refusal = breaker.refusal();

        assertThat(refusal.circuitBreakerName()).isEqualTo("payments");
        assertThat(refusal.retryIn()).isEqualTo(Duration.ofSeconds(20));
    }

    @Test
    void callReturnsTheOperationsResultWhenClosed() throws Exception {
        CircuitBreaker breaker = watched(breaker().build());

        assertThat(breaker.call(this::invoke)).isEqualTo("ok");
        assertThat(breaker.metrics().calls()).isEqualTo(1);
    }

    @Test
    void callRethrowsTheOperationsFailureUnchangedAndRecordsIt() {
        CircuitBreaker breaker = watched(breaker().build());
        IOException failure = new IOException("down");

        assertThatThrownBy(() -> breaker.call(() -> {
            throw failure;
        })).isSameAs(failure);
        assertThat(breaker.metrics().failures()).isEqualTo(1);
    }

    // ---- events, metrics, reset ----

    @Test
    void everyTransitionIsReportedInOrderWithTheBreakersName() {
        CircuitBreaker breaker = watched(breaker().consecutiveFailures(1).openDuration(Duration.ofSeconds(1)).build());

        fail(breaker, 1);
        clock.advance(Duration.ofSeconds(1));
        succeed(breaker, 1);

        assertThat(transitions).extracting(t -> t.from() + "->" + t.to())
                .containsExactly("CLOSED->OPEN", "OPEN->HALF_OPEN", "HALF_OPEN->CLOSED");
        assertThat(transitions).allSatisfy(t -> assertThat(t.circuitBreakerName()).isEqualTo("payments"));
        assertThat(transitions.get(1).at()).isEqualTo(Instant.ofEpochMilli(clock.currentTimeMillis()));
    }

    @Test
    void aThrowingTransitionListenerDoesNotBreakTheBreaker() {
        CircuitBreaker breaker = watched(breaker().consecutiveFailures(1).build());
        breaker.subscribe(t -> {
            throw new IllegalStateException("listener bug");
        });

        fail(breaker, 1);

        assertThat(breaker.state()).isEqualTo(State.OPEN);
        assertThat(transitions).hasSize(1);
    }

    @Test
    void metricsReportTheWindowsCountsAndTheBreakersHistory() {
        CircuitBreaker breaker = watched(breaker().minimumCalls(100).consecutiveFailures(10).failureRateThreshold(0.9).build());
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
        CircuitBreaker breaker = watched(breaker().consecutiveFailures(1).build());
        fail(breaker, 1);
        breaker.tryAcquirePermission();
        breaker.tryAcquirePermission();

        assertThat(breaker.metrics().state()).isEqualTo(State.OPEN);
        assertThat(breaker.metrics().rejected()).isEqualTo(2);
        assertThat(breaker.metrics().transitions()).isEqualTo(1);
    }

    @Test
    void resetClosesAnOpenBreakerWithFreshCounts() {
        CircuitBreaker breaker = watched(breaker().consecutiveFailures(2).build());
        fail(breaker, 2);

        breaker.reset();

        assertThat(breaker.state()).isEqualTo(State.CLOSED);
        assertThat(breaker.metrics().consecutiveFailures()).isZero();
        assertThat(transitions).extracting(t -> t.from() + "->" + t.to()).containsExactly("CLOSED->OPEN", "OPEN->CLOSED");
    }

    @Test
    void aForcedOpenBreakerRefusesCallsPastItsOpenDuration() {
        CircuitBreaker breaker = watched(breaker().openDuration(Duration.ofSeconds(30)).build());

        breaker.forceOpen();
        clock.advance(Duration.ofHours(1));

        assertThat(breaker.state()).isEqualTo(State.OPEN);
        assertThat(breaker.tryAcquirePermission().isGranted()).isFalse();
        assertThat(breaker.metrics().rejected()).isEqualTo(1);
        assertThat(transitions).extracting(t -> t.from() + "->" + t.to()).containsExactly("CLOSED->OPEN");
    }

    @Test
    void resetClosesAForcedOpenBreaker() {
        CircuitBreaker breaker = watched(breaker().build());
        breaker.forceOpen();

        breaker.reset();

        assertThat(breaker.state()).isEqualTo(State.CLOSED);
        assertThat(breaker.tryAcquirePermission().isGranted()).isTrue();
        assertThat(transitions).extracting(t -> t.from() + "->" + t.to()).containsExactly("CLOSED->OPEN", "OPEN->CLOSED");
    }

    @Test
    void forcingAnOpenBreakerOpenHoldsItWithoutANewTransition() {
        CircuitBreaker breaker = watched(breaker().consecutiveFailures(1).openDuration(Duration.ofSeconds(30)).build());
        fail(breaker, 1);

        breaker.forceOpen();
        breaker.forceOpen();
        clock.advance(Duration.ofMinutes(5));

        assertThat(breaker.state()).isEqualTo(State.OPEN);
        assertThat(transitions).extracting(t -> t.from() + "->" + t.to()).containsExactly("CLOSED->OPEN");
    }

    @Test
    void forcingAHalfOpenBreakerOpenIgnoresTheProbesOutcome() {
        CircuitBreaker breaker = watched(breaker().consecutiveFailures(1).openDuration(Duration.ofSeconds(30)).build());
        fail(breaker, 1);
        clock.advance(Duration.ofSeconds(30));
        CircuitBreaker.Permit probe = breaker.tryAcquirePermission();

        breaker.forceOpen();
        breaker.record(probe, "ok", null);

        assertThat(breaker.state()).isEqualTo(State.OPEN);
        assertThat(transitions).extracting(t -> t.from() + "->" + t.to())
                .containsExactly("CLOSED->OPEN", "OPEN->HALF_OPEN", "HALF_OPEN->OPEN");
    }

    @Test
    void aRefusalOfAForcedOpenBreakerSaysOpenDurationAsItsHint() {
        CircuitBreaker breaker = breaker().openDuration(Duration.ofSeconds(30)).build();
        breaker.forceOpen();

        assertThatThrownBy(() -> breaker.call(() -> "x")).isInstanceOfSatisfying(CircuitOpenException.class,
                e -> assertThat(e.retryIn()).isEqualTo(Duration.ofSeconds(30)));
    }

    @Test
    void resetOfAClosedBreakerStartsFreshCountsWithoutATransition() {
        CircuitBreaker breaker = watched(breaker().consecutiveFailures(3).build());
        fail(breaker, 2);

        breaker.reset();

        assertThat(breaker.metrics().consecutiveFailures()).isZero();
        assertThat(transitions).isEmpty();
    }

    @Test
    void metricsOfAnOpenBreakerHoldNoWindowCounts() {
        CircuitBreaker breaker = watched(breaker().minimumCalls(2).build());
        fail(breaker, 2);

        CircuitBreaker.Metrics metrics = breaker.metrics();

        assertThat(metrics.state()).isEqualTo(State.OPEN);
        assertThat(List.of(metrics.calls(), metrics.failures(), (long) metrics.consecutiveFailures())).containsOnly(0L);
    }

    @Test
    void aCancelledSubscriptionHearsNoMoreTransitions() {
        CircuitBreaker breaker = breaker().consecutiveFailures(1).openDuration(Duration.ofSeconds(1)).build();
        List<CircuitBreaker.Transition> heard = new CopyOnWriteArrayList<>();
        CircuitBreaker.Subscription subscription = breaker.subscribe(heard::add);
        fail(breaker, 1);

        subscription.cancel();
        clock.advance(Duration.ofSeconds(1));
        succeed(breaker, 1);

        assertThat(heard).extracting(CircuitBreaker.Transition::to).containsExactly(State.OPEN);
    }

    @Test
    void aBucketBusierThanItsWordCanCountContinuesInAnotherOfTheSamePeriod() {
        // One bucket counts up to 2^24 - 1 calls in its word; more in the same period go on in a
        // new bucket, and the window still counts every one of them.
        CircuitBreaker breaker = CircuitBreaker.builder("busy").clock(new FixedClock()).window(Duration.ofSeconds(30))
                .buckets(1).minimumCalls(Integer.MAX_VALUE).build();
        int calls = (1 << 24) + 5;
        for (int i = 0; i < calls - 2; i++) {
            breaker.record(breaker.tryAcquirePermission(), "ok", null);
        }
        fail(breaker, 2);

        assertThat(breaker.metrics().calls()).isEqualTo(calls);
        assertThat(breaker.metrics().failures()).isEqualTo(2);
        assertThat(breaker.metrics().consecutiveFailures()).isEqualTo(2);
    }

    @Test
    void limitsOfTheCountingWordAreValidatedWhenConfigured() {
        assertThatThrownBy(() -> breaker().consecutiveFailures(8192))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContainingAll("consecutiveFailures", "8191", "8192");
        assertThatThrownBy(() -> breaker().halfOpenPermits(1 << 28))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("halfOpenPermits");
    }

    // ---- when a trip takes effect ----

    @Test
    void aTripWhoseThreadStallsAtItsClockReadingStaysOpenForAWholePeriodFromWhatOthersSaw() {
        StallingClock stalling = new StallingClock(clock);
        CircuitBreaker breaker = CircuitBreaker.builder("payments").clock(stalling).consecutiveFailures(1)
                .openDuration(Duration.ofSeconds(10)).build();
        List<State> seenDuringTheStall = new ArrayList<>();
        stalling.stallAtTheNextReading(() -> {
            clock.advance(Duration.ofSeconds(10)); // a whole open period passes while the failure's thread is stalled
            seenDuringTheStall.add(breaker.state());
        });

        fail(breaker, 1);

        assertThat(seenDuringTheStall).hasSize(1);
        // whatever was seen meanwhile, the trip took effect no earlier than the clock move: a whole period from there
        assertThat(breaker.state()).isEqualTo(State.OPEN);
        assertThat(breaker.tryAcquirePermission().isGranted()).isFalse();
        assertThat(breaker.openException(null, null).retryIn()).isEqualTo(Duration.ofSeconds(10));
        clock.advance(Duration.ofSeconds(10));
        assertThat(breaker.state()).isEqualTo(State.HALF_OPEN);
    }

    @Test
    void aReopeningWhoseThreadStallsAtItsClockReadingAdmitsNoProbeEarly() {
        StallingClock stalling = new StallingClock(clock);
        CircuitBreaker breaker = CircuitBreaker.builder("payments").clock(stalling).consecutiveFailures(1)
                .openDuration(Duration.ofSeconds(10)).build();
        fail(breaker, 1);
        clock.advance(Duration.ofSeconds(10));
        CircuitBreaker.Permit probe = breaker.tryAcquirePermission();
        assertThat(probe.isGranted()).isTrue();
        List<Boolean> admittedDuringTheStall = new ArrayList<>();
        stalling.stallAtTheNextReading(() -> {
            clock.advance(Duration.ofSeconds(10));
            admittedDuringTheStall.add(breaker.tryAcquirePermission().isGranted());
        });

        breaker.record(probe, null, new IOException("still down"));

        assertThat(admittedDuringTheStall).containsExactly(false);
        assertThat(breaker.state()).isEqualTo(State.OPEN);
        assertThat(breaker.tryAcquirePermission().isGranted()).isFalse();
        clock.advance(Duration.ofSeconds(10));
        assertThat(breaker.tryAcquirePermission().isGranted()).isTrue();
    }

    @Test
    void aTripThatTakesEffectInALaterPeriodIsDecidedOnTheWindowThere() {
        StallingClock stalling = new StallingClock(clock);
        CircuitBreaker breaker = CircuitBreaker.builder("payments").clock(stalling).failureRateThreshold(0.5)
                .minimumCalls(2).window(Duration.ofSeconds(5)).buckets(1).openDuration(Duration.ofSeconds(10)).build();
        fail(breaker, 1);
        List<State> seenDuringTheStall = new ArrayList<>();
        stalling.stallAtTheNextReading(() -> {
            clock.advance(Duration.ofSeconds(5)); // the first failure leaves the window
            seenDuringTheStall.add(breaker.state());
        });

        fail(breaker, 1); // 2 of 2 when decided; 1 call, below the minimum, where it takes effect

        assertThat(seenDuringTheStall).hasSize(1);
        assertThat(breaker.state()).isEqualTo(State.CLOSED);
        CircuitBreaker.Metrics m = breaker.metrics();
        assertThat(List.of(m.calls(), m.failures(), (long) m.consecutiveFailures())).containsExactly(1L, 1L, 2L);
        fail(breaker, 1);
        assertThat(breaker.state()).isEqualTo(State.OPEN);
    }

    @Test
    void aTripThatStillHoldsInTheLaterPeriodOpensFromThere() {
        StallingClock stalling = new StallingClock(clock);
        CircuitBreaker breaker = CircuitBreaker.builder("payments").clock(stalling).failureRateThreshold(0.5)
                .minimumCalls(2).window(Duration.ofSeconds(10)).buckets(2).openDuration(Duration.ofSeconds(10)).build();
        fail(breaker, 1);
        List<State> seenDuringTheStall = new ArrayList<>();
        stalling.stallAtTheNextReading(() -> {
            clock.advance(Duration.ofSeconds(5));
            seenDuringTheStall.add(breaker.state()); // the trip takes effect at this reading, in the next period
        });

        fail(breaker, 1); // both failures are still in the window of the next period

        assertThat(seenDuringTheStall).containsExactly(State.OPEN);
        clock.advance(Duration.ofSeconds(9));
        assertThat(breaker.state()).isEqualTo(State.OPEN);
        clock.advance(Duration.ofSeconds(1));
        assertThat(breaker.state()).isEqualTo(State.HALF_OPEN);
    }

    /**
     * A virtual clock whose next precise reading, once armed, stalls the reading thread: the
     * reading is taken, then {@code stall} runs (moving time, acting as other threads would)
     * before the reading returns. Coarse readings never stall.
     */
    private static final class StallingClock implements Clock {
        private final VirtualClock time;
        private Runnable stall;

        StallingClock(VirtualClock time) {
            this.time = time;
        }

        void stallAtTheNextReading(Runnable stall) {
            this.stall = stall;
        }

        @Override
        public long nanoTime() {
            long reading = time.nanoTime();
            Runnable s = stall;
            if (s != null) {
                stall = null;
                s.run();
            }
            return reading;
        }

        @Override
        public long coarseNanoTime() {
            return time.nanoTime();
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

    /** A clock that never moves and costs nothing to read. */
    private static final class FixedClock implements Clock {
        @Override
        public long nanoTime() {
            return 0;
        }

        @Override
        public long currentTimeMillis() {
            return 0;
        }

        @Override
        public void sleep(long nanos) {
            throw new UnsupportedOperationException();
        }

        @Override
        public Cancellable schedule(Runnable task, long delayNanos) {
            throw new UnsupportedOperationException();
        }
    }
}
