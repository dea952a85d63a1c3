package dev.stagger.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class RunDurationsTest {

    @Test
    void readsEveryUnit() {
        assertThat(Durations.parse("200ms")).isEqualTo(Duration.ofMillis(200));
        assertThat(Durations.parse("5s")).isEqualTo(Duration.ofSeconds(5));
        assertThat(Durations.parse("1m")).isEqualTo(Duration.ofMinutes(1));
        assertThat(Durations.parse("1h")).isEqualTo(Duration.ofHours(1));
    }

    @Test
    void aBareNumberIsMilliseconds() {
        assertThat(Durations.parse("1500")).isEqualTo(Duration.ofMillis(1500));
    }

    @Test
    void acceptsFractionsCaseAndSpaces() {
        assertThat(Durations.parse(" 1.5S ")).isEqualTo(Duration.ofMillis(1500));
        assertThat(Durations.parse("0")).isEqualTo(Duration.ZERO);
    }

    @Test
    void rejectsGarbageNegativesAndUnknownUnitsNamingTheValue() {
        for (String bad : new String[] {"", "soon", "-5s", "5d", "5 sec", "1e3"}) {
            assertThatThrownBy(() -> Durations.parse(bad)).as(bad)
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("'" + bad + "'");
        }
    }

    @Test
    void rejectsAbsurdlyLongDurations() {
        assertThatThrownBy(() -> Durations.parse("9999999h")).hasMessageContaining("longer than a year");
    }
}
