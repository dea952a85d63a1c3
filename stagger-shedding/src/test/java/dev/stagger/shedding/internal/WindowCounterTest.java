package dev.stagger.shedding.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import org.junit.jupiter.api.Test;

class WindowCounterTest {
    private static final long SECOND = 1_000_000_000L;

    @Test
    void countsEventsInTheCurrentWindow() {
        WindowCounter counter = new WindowCounter(SECOND, 0);
        for (int i = 0; i < 7; i++) {
            counter.increment(i * 100_000_000L);
        }
        assertThat(counter.count(900_000_000L)).isEqualTo(7.0);
    }

    @Test
    void weighsThePreviousWindowByHowMuchOfItStillOverlaps() {
        WindowCounter counter = new WindowCounter(SECOND, 0);
        for (int i = 0; i < 100; i++) {
            counter.increment(i * 10_000_000L);
        }
        counter.increment(SECOND + 1);
        counter.increment(SECOND + 2);
        // a quarter into the new window: three quarters of the previous 100, plus 2
        assertThat(counter.count(SECOND + SECOND / 4)).isCloseTo(77.0, within(1e-6));
    }

    @Test
    void forgetsEverythingAfterTwoQuietWindows() {
        WindowCounter counter = new WindowCounter(SECOND, 0);
        counter.increment(10);
        counter.increment(SECOND / 2);
        assertThat(counter.count(2 * SECOND + 1)).isZero();
        counter.increment(2 * SECOND + 5);
        assertThat(counter.count(2 * SECOND + 6)).isEqualTo(1.0);
    }

    @Test
    void worksAcrossTheWrapOfTheNanosecondClock() {
        long start = Long.MAX_VALUE - SECOND / 2;
        WindowCounter counter = new WindowCounter(SECOND, start);
        counter.increment(start + 1);
        counter.increment(start + SECOND + 1); // past Long.MAX_VALUE: a negative reading
        assertThat(counter.count(start + SECOND + 2)).isCloseTo(2.0, within(1e-3));
    }
}
