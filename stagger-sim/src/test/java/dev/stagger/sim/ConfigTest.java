package dev.stagger.sim;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

class ConfigTest {

    @Test
    void contentionDefaultsAreTheAwsPostsSetup() {
        ContentionConfig c = ContentionConfig.defaults();
        assertThat(c.clients()).isEqualTo(100);
        assertThat(c.base()).isEqualTo(Duration.ofMillis(5));
        assertThat(c.cap()).isEqualTo(Duration.ofSeconds(2));
        assertThat(c.networkMean()).isEqualTo(Duration.ofMillis(10));
        assertThat(c.networkSd()).isEqualTo(Duration.ofMillis(2));
        assertThat(c.strategies()).containsExactly(Strategy.values());
    }

    @Test
    void rejectsZeroClientsNamingTheField() {
        assertThatThrownBy(() -> ContentionConfig.defaults().withClients(0))
                .isInstanceOf(IllegalArgumentException.class).hasMessage("clients must be at least 1, got 0");
        assertThatThrownBy(() -> OutageConfig.defaults().withClients(-3))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("clients").hasMessageContaining("-3");
    }

    @Test
    void rejectsZeroRunsAndNoStrategies() {
        assertThatThrownBy(() -> ContentionConfig.defaults().withRuns(0)).hasMessageContaining("runs");
        assertThatThrownBy(() -> OutageConfig.defaults().withStrategies(List.of())).hasMessageContaining("strategies");
    }

    @Test
    void rejectsANegativeOutage() {
        assertThatThrownBy(() -> OutageConfig.defaults().withOutage(Duration.ofSeconds(-1), Duration.ofSeconds(1)))
                .hasMessageContaining("outageStart");
    }

    @Test
    void theOfferedRateIsClientsTimesTheirRate() {
        assertThat(OutageConfig.defaults().withClients(30).offeredRate()).isEqualTo(300.0);
    }

    @Test
    void configsAreCopiedNotShared() {
        List<Strategy> mutable = new java.util.ArrayList<>(List.of(Strategy.NONE));
        ContentionConfig c = ContentionConfig.defaults().withStrategies(mutable);
        mutable.add(Strategy.POLLY_V2);
        assertThat(c.strategies()).containsExactly(Strategy.NONE);
    }
}
