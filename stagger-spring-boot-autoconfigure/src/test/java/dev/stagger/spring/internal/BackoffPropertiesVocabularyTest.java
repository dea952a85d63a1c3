package dev.stagger.spring.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.stagger.Backoff;
import dev.stagger.ExponentialBackoff;
import dev.stagger.RetryPolicy;
import dev.stagger.testing.VirtualClock;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;
import org.springframework.boot.context.properties.source.MapConfigurationPropertySource;

/** {@code stagger.retries.*.backoff} speaks stagger-core's one vocabulary of backoff and jitter names. */
class BackoffPropertiesVocabularyTest {
    private static final String B = "stagger.retries.orders.backoff.";

    private static Backoff backoff(String... pairs) {
        Map<String, String> map = new HashMap<>();
        for (int i = 0; i < pairs.length; i += 2) {
            map.put(B + pairs[i], pairs[i + 1]);
        }
        InstanceFactory factory = new InstanceFactory(new Binder(new MapConfigurationPropertySource(map)), new VirtualClock());
        return factory.policy("orders", factory.retryProperties("orders")).backoff();
    }

    @Test
    void nothingSetKeepsTheDefaultBackoff() {
        assertThat(backoff()).isSameAs(RetryPolicy.DEFAULT_BACKOFF);
        assertThat(backoff("base", "300ms")).hasToString(((ExponentialBackoff) RetryPolicy.DEFAULT_BACKOFF)
                .toString().replace("base=PT0.2S", "base=PT0.3S"));
    }

    @Test
    void spreadWithoutAFactorIsPlusOrMinusTwentyPercentAsOnTheCommandLine() {
        assertThat(((ExponentialBackoff) backoff("jitter", "spread")).jitter()).hasToString("spread(0.2)");
        assertThat(((ExponentialBackoff) backoff("jitter", "proportional")).jitter()).hasToString("proportional(0.3)");
    }

    @Test
    void aFactorMayBeWrittenInTheName() {
        assertThat(((ExponentialBackoff) backoff("jitter", "Spread(0.25)")).jitter()).hasToString("spread(0.25)");
        assertThat(((ExponentialBackoff) backoff("jitter", "spread(0.25)", "jitter-factor", "0.4")).jitter())
                .hasToString("spread(0.25)");
    }

    @Test
    void theJitterNameDecorrelatedSelectsTheDecorrelatedType() {
        assertThat(backoff("jitter", "decorrelated", "base", "100ms", "max-delay", "2s"))
                .hasToString(Backoff.decorrelated(Duration.ofMillis(100), Duration.ofSeconds(2)).toString());
    }

    @Test
    void aBadValueNamesThePropertyAndTheValue() {
        assertThatThrownBy(() -> backoff("jitter", "spread(2)"))
                .isInstanceOf(InvalidConfigurationPropertyValueException.class)
                .hasMessageContaining(B + "jitter").hasMessageContaining("spread(2)")
                .hasMessageContaining("jitter factor must be in [0, 1], got 2.0");
        assertThatThrownBy(() -> backoff("type", "cubic"))
                .hasMessageContaining(B + "type").hasMessageContaining("cubic")
                .hasMessageContaining("type must be exponential, fixed, linear, decorrelated or none");
        assertThatThrownBy(() -> backoff("type", "decorrelated", "base", "10s", "max-delay", "1s"))
                .hasMessageContaining(B + "max-delay").hasMessageContaining("cap must be >= base");
        assertThatThrownBy(() -> backoff("type", "decorrelated", "base", "10s"))
                .hasMessageContaining(B + "max-delay").hasMessageContaining("PT5S");
    }
}
