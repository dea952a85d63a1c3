package dev.stagger.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.stagger.EndReason;
import java.time.Duration;
import java.util.OptionalLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Writing and reading the deadline and "do not retry" headers: bad values are refused, never thrown on. */
class StaggerHeadersTest {

    @Test
    void aDeadlineIsWrittenInWholeMillisecondsRoundedDown() {
        assertThat(StaggerHeaders.deadlineValue(Duration.ofMillis(1500))).isEqualTo("1500");
        assertThat(StaggerHeaders.deadlineValue(Duration.ofNanos(1_999_999))).isEqualTo("1");
        assertThat(StaggerHeaders.deadlineValue(Duration.ZERO)).isEqualTo("0");
        assertThat(StaggerHeaders.deadlineValue(Duration.ofMillis(-5))).isEqualTo("0");
        assertThat(StaggerHeaders.deadlineValue(Duration.ofSeconds(Long.MAX_VALUE))).isEqualTo(Long.toString(Long.MAX_VALUE));
    }

    @Test
    void aDeadlineIsReadAsDecimalMilliseconds() {
        assertThat(StaggerHeaders.parseDeadlineMillis("250")).isEqualTo(OptionalLong.of(250));
        assertThat(StaggerHeaders.parseDeadlineMillis(" 250 ")).isEqualTo(OptionalLong.of(250));
        assertThat(StaggerHeaders.parseDeadlineMillis("0")).isEqualTo(OptionalLong.of(0));
        assertThat(StaggerHeaders.parseDeadlineMillis("999999999999999999")).isEqualTo(OptionalLong.of(999_999_999_999_999_999L));
    }

    @ParameterizedTest
    @ValueSource(strings = {"", " ", "-5", "+5", "1.5", "1e3", "10ms", "PT1S", "0x10", "١٢", "1 000",
            "9999999999999999999", "99999999999999999999999999999999999999999999"})
    void aBadDeadlineIsRefused(String value) {
        assertThat(StaggerHeaders.parseDeadlineMillis(value)).isEmpty();
    }

    @Test
    void aHugeStringIsRefusedWithoutReadingIt() {
        assertThat(StaggerHeaders.parseDeadlineMillis("1".repeat(1_000_000))).isEmpty();
    }

    @Test
    void noHeaderIsNoDeadline() {
        assertThat(StaggerHeaders.parseDeadlineMillis(null)).isEmpty();
    }

    @Test
    void aNoRetryReasonIsItsTokenOrUnspecified() {
        assertThat(StaggerHeaders.noRetryReason("circuit-open")).contains("circuit-open");
        assertThat(StaggerHeaders.noRetryReason(" Budget ")).contains("budget");
        assertThat(StaggerHeaders.noRetryReason("")).contains("unspecified");
        assertThat(StaggerHeaders.noRetryReason("a b")).contains("unspecified");
        assertThat(StaggerHeaders.noRetryReason("x".repeat(100))).contains("unspecified");
        assertThat(StaggerHeaders.noRetryReason(null)).isEmpty();
    }

    @Test
    void everyEndWithoutSuccessHasAToken() {
        for (EndReason r : EndReason.values()) {
            if (!r.isSuccess()) {
                assertThat(StaggerHeaders.noRetryToken(r)).matches("[a-z-]+");
            }
        }
        assertThat(StaggerHeaders.noRetryToken(EndReason.EXHAUSTED)).isEqualTo("gave-up");
        assertThat(StaggerHeaders.noRetryToken(EndReason.CIRCUIT_OPEN)).isEqualTo("circuit-open");
        assertThatThrownBy(() -> StaggerHeaders.noRetryToken(EndReason.SUCCESS))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("SUCCESS");
    }
}
