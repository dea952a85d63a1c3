package dev.stagger.sim;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.stagger.Backoff;
import dev.stagger.RandomSource;
import java.time.Duration;
import org.junit.jupiter.api.Test;

class StrategyTest {
    private static final Duration BASE = Duration.ofMillis(5);
    private static final Duration CAP = Duration.ofSeconds(2);

    @Test
    void parsesEveryLabelBackToItsStrategy() {
        for (Strategy s : Strategy.values()) {
            assertThat(Strategy.parse(s.label())).isEqualTo(s);
            assertThat(Strategy.parse(" " + s.label().toUpperCase() + " ")).isEqualTo(s);
        }
    }

    @Test
    void rejectsAnUnknownNameListingTheKnownOnes() {
        assertThatThrownBy(() -> Strategy.parse("linear"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("'linear'").hasMessageContaining("full-jitter");
    }

    @Test
    void plainExponentialDoublesFromTheBaseUpToTheCap() {
        Backoff.Schedule s = Strategy.EXPONENTIAL.backoff(BASE, CAP).start(RandomSource.sequence(0.5));
        assertThat(s.nextDelayNanos(1)).isEqualTo(5_000_000);
        assertThat(s.nextDelayNanos(2)).isEqualTo(10_000_000);
        assertThat(s.nextDelayNanos(20)).isEqualTo(2_000_000_000L);
    }

    @Test
    void fullJitterDrawsBetweenZeroAndTheExponentialDelay() {
        Backoff.Schedule s = Strategy.FULL_JITTER.backoff(BASE, CAP).start(RandomSource.sequence(0.5));
        assertThat(s.nextDelayNanos(3)).isEqualTo(10_000_000);
    }

    @Test
    void equalJitterNeverWaitsLessThanHalf() {
        Backoff.Schedule s = Strategy.EQUAL_JITTER.backoff(BASE, CAP).start(RandomSource.sequence(0.0));
        assertThat(s.nextDelayNanos(3)).isEqualTo(10_000_000);
    }

    @Test
    void proportionalJitterOnlyAdds() {
        Backoff.Schedule s = Strategy.PROPORTIONAL_JITTER.backoff(BASE, CAP).start(RandomSource.sequence(0.5));
        assertThat(s.nextDelayNanos(1)).isEqualTo(5_750_000);
    }

    @Test
    void immediateRetryNeverWaits() {
        assertThat(Strategy.NONE.backoff(BASE, CAP).start(RandomSource.sequence(0.5)).nextDelayNanos(7)).isZero();
    }

    @Test
    void everyStrategyStaysUnderTheCap() {
        for (Strategy strategy : Strategy.values()) {
            Backoff.Schedule s = strategy.backoff(BASE, CAP).start(RandomSource.seeded(7));
            for (int k = 1; k < 60; k++) {
                assertThat(s.nextDelayNanos(k)).as(strategy.label()).isBetween(0L, CAP.toNanos());
            }
        }
    }
}
