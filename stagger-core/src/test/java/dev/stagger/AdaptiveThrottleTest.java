package dev.stagger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import dev.stagger.testing.VirtualClock;
import java.io.IOException;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class AdaptiveThrottleTest {
    private final VirtualClock clock = new VirtualClock();

    private AdaptiveThrottle.Builder throttle() {
        return AdaptiveThrottle.builder("downstream").clock(clock);
    }

    /**
     * Makes {@code requests} requests, of which the first {@code accepted} the backend accepts and
     * the rest it rejects (unless the throttle refuses them first).
     */
    private static void traffic(AdaptiveThrottle throttle, int requests, int accepted) {
        for (int i = 0; i < requests; i++) {
            if (!throttle.tryAcquire()) {
                continue;
            }
            if (i < accepted) {
                throttle.onAccepted();
            } else {
                throttle.onRejected();
            }
        }
    }

    // ---- the formula ----

    @ParameterizedTest(name = "{0} requests, {1} accepts, K {2}: p = {3}")
    @CsvSource({
            "10, 10, 2, 0",       // healthy: nothing refused
            "10, 5, 2, 0",        // half rejected: at the threshold for K = 2
            "100, 0, 2, 0.990099", // 100 / 101
            "100, 20, 2, 0.594059", // (100 - 40) / 101
            "100, 20, 1.5, 0.693069", // (100 - 30) / 101
            "9, 3, 1.1, 0.57",    // (9 - 3.3) / 10
    })
    void refusesWithTheProbabilityOfTheSreFormula(int requests, int accepts, double k, double p) {
        AdaptiveThrottle throttle = throttle().k(k).random(RandomSource.sequence(0.999)).build();

        traffic(throttle, requests, accepts);

        assertThat(throttle.rejectionProbability()).isCloseTo(p, within(1e-6));
    }

    @Test
    void aRequestIsRefusedWhenTheDrawFallsBelowTheProbability() {
        double[] draw = {0.999};
        AdaptiveThrottle below = throttle().random(() -> draw[0]).build();
        AdaptiveThrottle above = throttle().random(() -> draw[0]).build();
        traffic(below, 100, 20); // p = (100 - 40) / 101 = 0.594059
        traffic(above, 100, 20);

        draw[0] = 0.5940;
        assertThat(below.tryAcquire()).isFalse();
        draw[0] = 0.5941;
        assertThat(above.tryAcquire()).isTrue();
        assertThat(below.rejections()).isEqualTo(1);
        assertThat(below.requests()).as("a refusal is a request").isEqualTo(101);
        assertThat(above.requests()).as("a request let through counts when its outcome is known").isEqualTo(100);
    }

    @Test
    void requestsInFlightWeighOnNeitherSide() {
        // a burst sent before any answer came back must not refuse itself
        AdaptiveThrottle throttle = throttle().random(RandomSource.sequence(0.0)).build();
        traffic(throttle, 10, 10);

        for (int i = 0; i < 100; i++) {
            assertThat(throttle.tryAcquire()).isTrue();
        }
        assertThat(throttle.requests()).isEqualTo(10);
    }

    @Test
    void aHealthyBackendIsNeverThrottledAndNoRandomNumberIsDrawn() {
        AdaptiveThrottle throttle = throttle().random(() -> {
            throw new AssertionError("no draw when p = 0");
        }).build();

        for (int i = 0; i < 1000; i++) {
            assertThat(throttle.tryAcquire()).isTrue();
            throttle.onAccepted();
        }

        assertThat(throttle.rejections()).isZero();
    }

    @Test
    void refusedRequestsCountAsRequests() {
        AdaptiveThrottle throttle = throttle().random(RandomSource.sequence(0.0)).build();

        traffic(throttle, 10, 0);

        assertThat(throttle.requests()).isEqualTo(10);
        assertThat(throttle.rejections()).as("the first request has p = 0; every later one p > 0").isEqualTo(9);
    }

    @Test
    void aBackendAtCapacityIsSentAboutKRequestsPerAccept() {
        // clients want 1,000 requests a second; the backend accepts 100 a second and rejects the rest
        AdaptiveThrottle throttle = throttle().random(RandomSource.seeded(7)).build();
        long sentInLastMinute = 0;
        long acceptedInLastMinute = 0;
        for (int second = 0; second < 300; second++) {
            int accepted = 0;
            int sent = 0;
            for (int i = 0; i < 1000; i++) {
                if (throttle.tryAcquire()) {
                    sent++;
                    if (accepted < 100) {
                        accepted++;
                        throttle.onAccepted();
                    } else {
                        throttle.onRejected();
                    }
                }
            }
            if (second >= 240) {
                sentInLastMinute += sent;
                acceptedInLastMinute += accepted;
            }
            clock.advance(Duration.ofSeconds(1));
        }

        assertThat(acceptedInLastMinute).isEqualTo(6000);
        assertThat(sentInLastMinute / (double) acceptedInLastMinute).isCloseTo(2.0, within(0.1));
    }

    // ---- the window ----

    @Test
    void countsOlderThanTheWindowAreForgotten() {
        AdaptiveThrottle throttle = throttle().window(Duration.ofSeconds(10)).buckets(10)
                .random(RandomSource.sequence(0.999)).build();
        traffic(throttle, 50, 0);

        clock.advance(Duration.ofSeconds(10));

        assertThat(throttle.requests()).isZero();
        assertThat(throttle.rejectionProbability()).isZero();
    }

    @Test
    void theWindowRollsOneBucketAtATime() {
        AdaptiveThrottle throttle = throttle().window(Duration.ofSeconds(10)).buckets(10)
                .random(RandomSource.sequence(0.999)).build();
        traffic(throttle, 30, 0); // bucket [0 s, 1 s)
        clock.advance(Duration.ofSeconds(5));
        traffic(throttle, 20, 20); // bucket [5 s, 6 s)

        clock.advance(Duration.ofMillis(4999)); // 9.999 s: both buckets still in the window
        assertThat(throttle.requests()).isEqualTo(50);
        assertThat(throttle.rejectionProbability()).isCloseTo(10 / 51.0, within(1e-9));

        clock.advance(Duration.ofMillis(1)); // 10 s: the first bucket leaves the window
        assertThat(throttle.requests()).isEqualTo(20);
        assertThat(throttle.accepts()).isEqualTo(20);
        assertThat(throttle.rejectionProbability()).isZero();
    }

    @Test
    void anOutcomeRecordedOnAClockReadingOlderThanTheWindowIsDropped() {
        long[] readings = {5_000_000_000L, 0};
        Clock stale = new Clock() {
            private int next;

            @Override
            public long nanoTime() {
                return readings[Math.min(next++, readings.length - 1)];
            }

            @Override
            public long currentTimeMillis() {
                return 0;
            }

            @Override
            public void sleep(long nanos) {
            }

            @Override
            public Cancellable schedule(Runnable task, long delayNanos) {
                throw new UnsupportedOperationException();
            }
        };
        // 2 buckets of 1 s; the first reading (building) is at 5 s, the outcome reads 0 s: four buckets back
        AdaptiveThrottle throttle = AdaptiveThrottle.builder("stale").window(Duration.ofSeconds(2)).buckets(2)
                .clock(stale).build();

        throttle.onAccepted(); // reads 0 s: slot 0 holds 4 s, two laps newer

        readings[1] = 4_000_000_000L;
        assertThat(throttle.requests()).isZero();
    }

    @Test
    void aSlotIsRecycledForANewBucketAfterTheWindowHasGoneRound() {
        AdaptiveThrottle throttle = throttle().window(Duration.ofSeconds(2)).buckets(2)
                .random(RandomSource.sequence(0.999)).build();
        traffic(throttle, 7, 0);

        clock.advance(Duration.ofSeconds(2)); // same slot, two buckets later
        traffic(throttle, 3, 3);

        assertThat(throttle.requests()).isEqualTo(3);
        assertThat(throttle.accepts()).isEqualTo(3);
    }

    @Test
    void theThrottleReopensAfterAFullOutageOnceTheBackendAcceptsAgain() {
        AdaptiveThrottle throttle = throttle().window(Duration.ofSeconds(60)).buckets(60)
                .random(RandomSource.seeded(1)).build();
        traffic(throttle, 1000, 0);
        assertThat(throttle.rejectionProbability()).isGreaterThan(0.99);

        int seconds = 0;
        while (throttle.rejectionProbability() > 0 && seconds < 600) {
            clock.advance(Duration.ofSeconds(1));
            seconds++;
            for (int i = 0; i < 100; i++) {
                if (throttle.tryAcquire()) {
                    throttle.onAccepted(); // the backend is back: it accepts all it gets
                }
            }
        }

        // refused requests keep counting, so a few always get through and the accepts they earn
        // let more through: the admitted share roughly doubles every window-length of history
        assertThat(throttle.rejectionProbability()).isZero();
        assertThat(seconds).as("reopened within ten windows").isLessThan(600);
    }

    // ---- acceptance ----

    @Test
    void byDefaultAnOutcomeTheClassifierWouldRetryIsNotAnAccept() {
        AdaptiveThrottle throttle = throttle().build();

        throttle.record("ok", null, Decision.accept());
        throttle.record(null, new IllegalArgumentException("404"), Decision.stop());
        throttle.record(null, new IOException("503"), Decision.retryAfter(Duration.ofSeconds(1)));
        throttle.record(null, new IOException("timeout"), Decision.retry());

        assertThat(throttle.accepts()).isEqualTo(2);
        assertThat(throttle.requests()).isEqualTo(4);
    }

    @Test
    void whatCountsAsAcceptedIsConfigurable() {
        // only a server hint (Retry-After) is a rejection; a timeout still reached the backend
        AdaptiveThrottle throttle = throttle()
                .acceptedWhen((result, failure, decision) -> decision.minDelay().isZero()).build();

        throttle.record(null, new IOException("timeout"), Decision.retry());
        throttle.record(null, new IOException("429"), Decision.retryAfter(Duration.ofSeconds(2)));

        assertThat(throttle.accepts()).isEqualTo(1);
    }

    @Test
    void aViewWithAnotherPredicateSharesTheCounts() {
        AdaptiveThrottle throttle = throttle().build();
        AdaptiveThrottle strict = throttle.withAcceptedWhen((result, failure, decision) -> "200".equals(result));

        strict.record("404", null, Decision.stop()); // accepted by the default rule, not by the view's
        throttle.record("404", null, Decision.stop());

        assertThat(throttle.requests()).isEqualTo(2);
        assertThat(strict.accepts()).isEqualTo(1);
        assertThat(strict.name()).isEqualTo(throttle.name());
    }

    @Test
    void aPredicateThatThrowsCountsTheAttemptAsNotAccepted() {
        AdaptiveThrottle throttle = throttle().acceptedWhen((result, failure, decision) -> {
            throw new IllegalStateException("broken predicate");
        }).build();

        throttle.record("ok", null, Decision.accept());

        assertThat(throttle.accepts()).isZero();
        assertThat(throttle.requests()).isEqualTo(1);
    }

    // ---- configuration ----

    @Test
    void defaultsAreTheSreBooks() {
        AdaptiveThrottle throttle = AdaptiveThrottle.of("d");

        assertThat(throttle.k()).isEqualTo(2.0);
        assertThat(throttle.window()).isEqualTo(Duration.ofMinutes(2));
        assertThat(throttle.buckets()).isEqualTo(20);
        assertThat(throttle.name()).isEqualTo("d");
    }

    @Test
    void badValuesAreRejectedNamingTheFieldAndTheValue() {
        assertThatThrownBy(() -> throttle().k(0.5)).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("k must be in [1, 1000], got 0.5");
        assertThatThrownBy(() -> throttle().k(Double.NaN)).hasMessage("k must be in [1, 1000], got NaN");
        assertThatThrownBy(() -> throttle().buckets(0)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("buckets").hasMessageContaining("0");
        assertThatThrownBy(() -> throttle().buckets(1001)).hasMessage("buckets must be at most 1000, got 1001");
        assertThatThrownBy(() -> throttle().window(Duration.ZERO)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("window");
        assertThatThrownBy(() -> AdaptiveThrottle.builder(null)).hasMessage("name must not be null");
        assertThatThrownBy(() -> throttle().acceptedWhen(null)).hasMessage("acceptedWhen must not be null");
    }
}
