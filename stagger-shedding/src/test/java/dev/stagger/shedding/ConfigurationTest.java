package dev.stagger.shedding;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;

/** Bad configuration fails when it is configured, naming the field and the value. */
class ConfigurationTest {

    @Test
    void gradientDefaultsAreEnvoys() {
        GradientLimit g = GradientLimit.builder().build();
        assertThat(g.minLimit()).isEqualTo(3);
        assertThat(g.maxLimit()).isEqualTo(1000);
        assertThat(g.sampleWindow()).isEqualTo(Duration.ofMillis(100));
        assertThat(g.minRttPercentile()).isEqualTo(0.5);
        assertThat(g.minRttInterval()).isEqualTo(Duration.ofSeconds(60));
        assertThat(g.minRttJitter()).isEqualTo(0.15);
        assertThat(g.minRttSamples()).isEqualTo(50);
        assertThat(g.minRttBuffer()).isEqualTo(0.25);
    }

    @Test
    void aimdDefaults() {
        AimdLimit a = AimdLimit.builder(Duration.ofMillis(250)).build();
        assertThat(a.latencyThreshold()).isEqualTo(Duration.ofMillis(250));
        assertThat(a.initialLimit()).isEqualTo(20);
        assertThat(a.minLimit()).isEqualTo(1);
        assertThat(a.maxLimit()).isEqualTo(1000);
        assertThat(a.backoffRatio()).isEqualTo(0.9);
    }

    @Test
    void toBuilderCopiesEverySetting() {
        GradientLimit g = GradientLimit.builder().minLimit(2).maxLimit(50).sampleWindow(Duration.ofMillis(250))
                .minRttPercentile(0.9).minRttInterval(Duration.ofSeconds(30)).minRttJitter(0.3).minRttSamples(20)
                .minRttBuffer(0.5).build();
        assertThat(g.toBuilder().build()).hasToString(g.toString());
        AimdLimit a = AimdLimit.builder(Duration.ofSeconds(2)).initialLimit(7).minLimit(5).maxLimit(9).backoffRatio(0.5)
                .build();
        assertThat(a.toBuilder().build()).hasToString(a.toString());
    }

    @Test
    void limitsRefuseBadValues() {
        assertIllegal(() -> Limit.fixed(0), "limit must be at least 1, got 0");
        assertIllegal(() -> AimdLimit.builder(Duration.ZERO), "latencyThreshold must be positive, got PT0S");
        assertIllegal(() -> AimdLimit.builder(Duration.ofSeconds(1)).backoffRatio(1.0), "backoffRatio must be in (0.0, 1.0), got 1.0");
        assertIllegal(() -> AimdLimit.builder(Duration.ofSeconds(1)).backoffRatio(Double.NaN), "backoffRatio must be in (0.0, 1.0), got NaN");
        assertIllegal(() -> AimdLimit.builder(Duration.ofSeconds(1)).minLimit(10).maxLimit(5).initialLimit(7).build(),
                "maxLimit must be at least minLimit 10, got 5");
        assertIllegal(() -> AimdLimit.builder(Duration.ofSeconds(1)).initialLimit(2000).build(),
                "initialLimit must be in [minLimit 1, maxLimit 1000], got 2000");
        assertIllegal(() -> GradientLimit.builder().minLimit(0), "minLimit must be at least 1, got 0");
        assertIllegal(() -> GradientLimit.builder().minLimit(10).maxLimit(5).build(), "maxLimit must be at least minLimit 10, got 5");
        assertIllegal(() -> GradientLimit.builder().minRttPercentile(0), "minRttPercentile must be in (0, 1], got 0.0");
        assertIllegal(() -> GradientLimit.builder().minRttJitter(1.5), "minRttJitter must be in [0.0, 1.0], got 1.5");
        assertIllegal(() -> GradientLimit.builder().minRttSamples(10_001), "minRttSamples must be at most 10000, got 10001");
        assertIllegal(() -> GradientLimit.builder().minRttBuffer(-0.1), "minRttBuffer must be in [0.0, 10.0], got -0.1");
        assertIllegal(() -> GradientLimit.builder().sampleWindow(Duration.ofMillis(-1)), "sampleWindow must be positive, got PT-0.001S");
    }

    @Test
    void theFilterRefusesBadValues() {
        assertIllegal(() -> LoadSheddingFilter.builder(" "), "name must be 1-200 characters and not blank, got \" \"");
        assertIllegal(() -> LoadSheddingFilter.builder("n".repeat(201)), "name must be 1-200 characters and not blank, got \""
                + "n".repeat(64) + "...\" (201 characters)");
        assertIllegal(() -> LoadSheddingFilter.builder("api").status(500), "status must be 503 or 429, got 500");
        assertIllegal(() -> LoadSheddingFilter.builder("api").minRetryAfter(Duration.ofMillis(1500)),
                "minRetryAfter must be whole seconds from 0 s to 86400 s, got PT1.5S");
        assertIllegal(() -> LoadSheddingFilter.builder("api").maxRetryAfter(Duration.ZERO),
                "maxRetryAfter must be whole seconds from 1 s to 86400 s, got PT0S");
        assertIllegal(() -> LoadSheddingFilter.builder("api").minRetryAfter(Duration.ofSeconds(10))
                .maxRetryAfter(Duration.ofSeconds(5)).build(), "maxRetryAfter must be at least minRetryAfter PT10S, got PT5S");
        assertIllegal(() -> LoadSheddingFilter.builder("api").retryAfterJitter(2), "retryAfterJitter must be in [0.0, 1.0], got 2.0");
        assertIllegal(() -> LoadSheddingFilter.builder("api").firstAttemptReserve(-1), "firstAttemptReserve must be in [0.0, 1.0], got -1.0");
    }

    @Test
    void nullsAreRefusedNamingTheParameter() {
        assertThatThrownBy(() -> LoadSheddingFilter.builder(null)).isInstanceOf(NullPointerException.class)
                .hasMessage("name must not be null");
        assertThatThrownBy(() -> LoadSheddingFilter.builder("api").limit(null)).isInstanceOf(NullPointerException.class)
                .hasMessage("limit must not be null");
        assertThatThrownBy(() -> LoadSheddingFilter.builder("api").clock(null)).isInstanceOf(NullPointerException.class)
                .hasMessage("clock must not be null");
        assertThatThrownBy(() -> AimdLimit.builder(null)).isInstanceOf(NullPointerException.class)
                .hasMessage("latencyThreshold must not be null");
    }

    @Test
    void theFilterStartsWithTheLimitsInitialValue() {
        assertThat(LoadSheddingFilter.builder("api").build().limit()).isEqualTo(3); // gradient: measuring its minRTT
        assertThat(LoadSheddingFilter.builder("api").limit(Limit.fixed(12)).build().limit()).isEqualTo(12);
        assertThat(LoadSheddingFilter.builder("api").limit(AimdLimit.builder(Duration.ofSeconds(1)).build()).build().limit())
                .isEqualTo(20);
    }

    private static void assertIllegal(org.assertj.core.api.ThrowableAssert.ThrowingCallable call, String message) {
        assertThatThrownBy(call).isInstanceOf(IllegalArgumentException.class).hasMessage(message);
    }
}
