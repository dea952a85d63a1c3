package dev.stagger.shedding.internal;

import dev.stagger.internal.LimitAlgorithm;

import static org.assertj.core.api.Assertions.assertThat;

import dev.stagger.RandomSource;
import dev.stagger.shedding.GradientLimit;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** Samples carry their own timestamps (virtual nanoseconds): no clock, no sleeping. */
class GradientAlgorithmTest {
    static final long MS = 1_000_000L;

    /**
     * minRTT from 10 samples, 100 ms windows, a re-measure every 60 s (+ 7.5 % jitter at u = 0.5).
     */
    static GradientAlgorithm gradient(GradientLimit.Builder config) {
        return (GradientAlgorithm) Limits.algorithm(config.build(), RandomSource.sequence(0.5), 0);
    }

    static GradientLimit.Builder config() {
        return GradientLimit.builder().minRttSamples(10);
    }

    /** Feeds {@code count} samples of {@code latencyMs}, all admitted at {@code startMs}. */
    static int feed(LimitAlgorithm limit, long startMs, long latencyMs, int count, int inFlight) {
        int result = limit.limit();
        for (int i = 0; i < count; i++) {
            result = limit.onSample(startMs * MS, (startMs + latencyMs) * MS, inFlight);
        }
        return result;
    }

    /** Ends the minRTT measurement with samples of {@code latencyMs} admitted at {@code atMs}. */
    static void measure(GradientAlgorithm limit, long atMs, long latencyMs) {
        feed(limit, atMs, latencyMs, 10, 3);
        assertThat(limit.measuring()).isFalse();
    }

    @Test
    void startsPinnedToTheMinimumUntilTheMinRttIsMeasured() {
        GradientAlgorithm limit = gradient(config());
        assertThat(limit.limit()).isEqualTo(3);
        assertThat(limit.measuring()).isTrue();
        feed(limit, 0, 50, 9, 3);
        assertThat(limit.measuring()).isTrue();
        feed(limit, 0, 50, 1, 3);
        assertThat(limit.measuring()).isFalse();
        assertThat(limit.minRttNanos()).isEqualTo(50 * MS);
    }

    @Test
    void theMinRttIsTheConfiguredPercentileOfItsSamples() {
        GradientAlgorithm limit = gradient(config().minRttPercentile(0.9));
        for (int i = 1; i <= 10; i++) {
            limit.onSample(0, i * 10 * MS, 3);
        }
        assertThat(limit.minRttNanos()).isEqualTo(90 * MS);
    }

    @Test
    void samplesOfRequestsAdmittedBeforeTheMeasurementBeganDoNotCount() {
        GradientAlgorithm limit = (GradientAlgorithm) Limits.algorithm(config().build(), RandomSource.sequence(0.5),
                1_000 * MS);
        feed(limit, 999, 500, 20, 50); // admitted before the filter's measurement started
        assertThat(limit.measuring()).isTrue();
        feed(limit, 1_000, 40, 10, 3);
        assertThat(limit.minRttNanos()).isEqualTo(40 * MS);
    }

    @Test
    void growsByTheGradientAndSquareRootHeadroomWhileLatencyStaysAtTheMinRtt() {
        GradientAlgorithm limit = gradient(config());
        measure(limit, 0, 50); // the first window runs from 50 to 150 ms
        // gradient = 50 * 1.25 / 50 = 1.25: 3 * 1.25 = 3.75, + sqrt(3.75) = 5.69
        assertThat(round(limit, 110, 50, 3)).isEqualTo(5);
        // the next window, from 160 ms; from 5.69 (kept exactly): 7.11, + 2.67 = 9.78
        assertThat(round(limit, 270, 50, 5)).isEqualTo(9);
    }

    @Test
    void aWindowClosesOnlyAfterItsTimeAndAFullRoundOfTheLimit() {
        GradientAlgorithm limit = gradient(config());
        measure(limit, 0, 50); // the window runs from 50 to 150 ms and needs 3 requests
        feed(limit, 60, 50, 5, 3); // five requests, but the time is not up
        assertThat(limit.limit()).isEqualTo(3);
        assertThat(feed(limit, 110, 50, 1, 3)).isEqualTo(5); // the time is up, with more than 3
        feed(limit, 300, 50, 4, 5); // the time of the next window is up, but only 4 of 5 requests
        assertThat(limit.limit()).isEqualTo(5);
        assertThat(feed(limit, 300, 50, 1, 5)).isEqualTo(9);
    }

    @Test
    void shrinksWhenLatencyRisesAboveTheMinRttPlusItsBuffer() {
        GradientAlgorithm limit = gradient(config());
        measure(limit, 0, 50);
        grow(limit, 40);
        int before = limit.limit();
        // 100 ms against 50 * 1.25: gradient 0.625
        int after = round(limit, 10_000, 100, before);
        double scaled = 0.625 * before;
        assertThat(after).isEqualTo((int) (scaled + Math.sqrt(scaled)));
    }

    @Test
    void aWindowsLatencyIsTheMeanOfItsRequests() {
        GradientAlgorithm limit = gradient(config());
        measure(limit, 0, 50);
        grow(limit, 40);
        int before = limit.limit();
        int waited = before / 2;
        feed(limit, 10_000, 50, before - waited, before); // found a free slot
        int after = feed(limit, 10_000, 150, waited, before); // waited two service times
        double mean = (50.0 * (before - waited) + 150.0 * waited) / before;
        double scaled = Math.max(0.5, 50 * 1.25 / mean) * before;
        assertThat(after).isEqualTo((int) (scaled + Math.sqrt(scaled)));
    }

    @Test
    void theGradientIsClampedAtOneHalf() {
        GradientAlgorithm limit = gradient(config());
        measure(limit, 0, 50);
        grow(limit, 100);
        int before = limit.limit();
        int after = round(limit, 20_000, 900, before); // 18x slower: gradient 0.07, clamped
        double scaled = 0.5 * before;
        assertThat(after).isEqualTo((int) (scaled + Math.sqrt(scaled)));
    }

    @Test
    void doesNotGrowInAWindowThatUsedLessThanHalfTheLimit() {
        GradientAlgorithm limit = gradient(config());
        measure(limit, 0, 50);
        grow(limit, 40);
        int before = limit.limit();
        assertThat(round(limit, 10_000, 50, before / 2 - 1)).isEqualTo(before);
    }

    @Test
    void ignoresRequestsAdmittedBeforeTheWindowOpened() {
        GradientAlgorithm limit = gradient(config());
        measure(limit, 0, 50); // the window opens at 50 ms
        feed(limit, 40, 5_000, 20, 3); // admitted before it: their latency is the old limit's doing
        assertThat(limit.limit()).isEqualTo(3);
        assertThat(round(limit, 110, 50, 3)).isEqualTo(5);
    }

    @Test
    void staysWithinItsMaximum() {
        GradientAlgorithm limit = gradient(config().maxLimit(12));
        measure(limit, 0, 50);
        grow(limit, 20);
        assertThat(limit.limit()).isEqualTo(12);
    }

    @Test
    void measuresTheMinRttAgainAfterItsIntervalPlusJitterAtWhatTheServerWasJustServingWell() {
        GradientAlgorithm limit = gradient(config());
        measure(limit, 0, 50); // ends at 50 ms; next measurement due at 50 ms + 60 s * 1.075
        grow(limit, 40);
        long due = 50 + 64_500;
        round(limit, due - 200, 50, limit.limit()); // a window closing before it is due
        assertThat(limit.measuring()).isFalse();
        int served = limit.limit() - 5;
        round(limit, due, 50, served); // the first window closing after it: `served` in flight at the minRTT
        int before = limit.limit();
        assertThat(limit.measuring()).isTrue();
        assertThat(before).isEqualTo(served); // not the floor of 3: what the server was just serving
        measure(limit, due + 100, 40); // the service got faster
        assertThat(limit.minRttNanos()).isEqualTo(40 * MS);
        assertThat(limit.limit()).isGreaterThan(before); // back to where it was before the measurement
    }

    @Test
    void aMeasurementAboveTheFloorMayLowerTheMinRttButNotRaiseIt() {
        GradientAlgorithm limit = gradient(config());
        measure(limit, 0, 50);
        grow(limit, 40);
        long due = 50 + 64_500;
        round(limit, due, 50, limit.limit());
        assertThat(limit.measuring()).isTrue();
        assertThat(limit.limit()).isGreaterThan(3);
        measure(limit, due + 100, 60); // queued a little at the pinned limit: says nothing of a slower service
        assertThat(limit.minRttNanos()).isEqualTo(50 * MS);
    }

    @Test
    void aMeasurementThatFindsRequestsQueuingHalvesItsLimitDownToTheFloorWhereItMayRaiseTheMinRtt() {
        GradientAlgorithm limit = gradient(config());
        measure(limit, 0, 50);
        grow(limit, 40);
        long due = 50 + 64_500;
        round(limit, due, 50, limit.limit());
        long at = due + 100;
        int pinned = limit.limit();
        assertThat(pinned).isGreaterThan(3); // first at what the server was just serving
        while (pinned > 3) { // the service got 2x slower: 100 ms is above 50 ms plus the tolerance at any limit
            feed(limit, at, 100, 10, pinned);
            assertThat(limit.measuring()).isTrue();
            assertThat(limit.limit()).isEqualTo(Math.max(3, pinned / 2));
            assertThat(limit.minRttNanos()).isEqualTo(50 * MS);
            pinned = limit.limit();
            at += 200;
        }
        measure(limit, at, 100);
        assertThat(limit.minRttNanos()).isEqualTo(100 * MS);
    }

    @Test
    void aLongRequestIsNoSampleForTheWindow() {
        GradientAlgorithm limit = gradient(config());
        measure(limit, 0, 50); // the minRTT is 50 ms: a request of over 10 x max(50, 100) ms = 1 s is long
        assertThat(limit.longRequestNanos()).isEqualTo(1_000 * MS);
        feed(limit, 60, 30_000, 1, 3); // a long poll admitted in the window
        assertThat(round(limit, 110, 50, 3)).isEqualTo(5); // grows as if it were not there
    }

    @Test
    void aQuietServerAtTheMinimumDoesNotMeasureAgain() {
        GradientAlgorithm limit = gradient(config());
        measure(limit, 0, 50);
        for (int w = 1; w <= 10; w++) {
            round(limit, w * 200L, 50, 1); // latency at the minRTT, one request in flight of 3
            assertThat(limit.limit()).isEqualTo(3);
            assertThat(limit.measuring()).as("window %d", w).isFalse();
        }
    }

    @Test
    void measuresTheMinRttAgainAfterFiveWindowsAtTheMinimum() {
        GradientAlgorithm limit = gradient(config());
        measure(limit, 0, 10);
        for (int w = 1; w <= 4; w++) {
            round(limit, w * 1_100L, 1_000, 3); // the service got 100x slower: stuck at the minimum
            assertThat(limit.measuring()).as("window %d", w).isFalse();
        }
        round(limit, 5_500, 1_000, 3);
        assertThat(limit.measuring()).isTrue();
        measure(limit, 7_000, 1_000);
        assertThat(limit.minRttNanos()).isEqualTo(1_000 * MS);
    }

    /**
     * One full round: as many requests as the limit, all admitted at {@code startMs} with
     * {@code inFlight} in flight; closes the window if its time is up by their end.
     */
    private static int round(LimitAlgorithm limit, long startMs, long latencyMs, int inFlight) {
        return feed(limit, startMs, latencyMs, limit.limit(), inFlight);
    }

    /** Closes {@code windows} windows of full rounds at the minRTT with the limit fully used. */
    private static void grow(GradientAlgorithm limit, int windows) {
        for (int w = 1; w <= windows; w++) {
            round(limit, 100L + w * 100L, 50, limit.limit());
        }
    }
}
