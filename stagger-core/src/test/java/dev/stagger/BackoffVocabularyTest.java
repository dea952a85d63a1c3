package dev.stagger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import net.jqwik.api.Assume;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.DoubleRange;
import net.jqwik.api.constraints.StringLength;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** The one vocabulary of jitter and backoff names: {@link Jitter#parse(String)} and {@link BackoffSpec}. */
class BackoffVocabularyTest {

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "none               | none",
        "full               | full",
        "equal              | equal",
        "FULL               | full",
        "' Equal '          | equal",
        "proportional       | proportional(0.3)",
        "proportional(0.5)  | proportional(0.5)",
        "spread             | spread(0.2)",
        "spread(0.4)        | spread(0.4)",
        "'Spread( 0.25 )'   | spread(0.25)",
        "spread(0)          | spread(0.0)",
        "proportional(1)    | proportional(1.0)",
    })
    void everyNameGivesItsJitter(String text, String expected) {
        Jitter jitter = Jitter.parse(text);
        switch (expected) {
            case "none" -> assertThat(jitter).isSameAs(Jitter.none());
            case "full" -> assertThat(jitter).isSameAs(Jitter.full());
            case "equal" -> assertThat(jitter).isSameAs(Jitter.equal());
            default -> assertThat(jitter).hasToString(expected);
        }
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "sometimes          | jitter must be none, full, equal, proportional, proportional(f), spread or spread(f), got 'sometimes'",
        "''                 | jitter must be none, full, equal, proportional, proportional(f), spread or spread(f), got ''",
        "decorrelated       | jitter must be none, full, equal, proportional, proportional(f), spread or spread(f), got 'decorrelated'",
        "full(0.3)          | jitter full takes no factor, got 'full(0.3)'",
        "spread(0.2         | jitter factor must be written spread(f), got 'spread(0.2'",
        "spread(lots)       | jitter factor must be a number in [0, 1], got 'spread(lots)'",
        "spread()           | jitter factor must be a number in [0, 1], got 'spread()'",
        "proportional(1.5)  | jitter factor must be in [0, 1], got 1.5",
        "spread(-0.1)       | jitter factor must be in [0, 1], got -0.1",
        "spread(NaN)        | jitter factor must be a number in [0, 1], got 'spread(NaN)'",
        "spread(0.5d)       | jitter factor must be a number in [0, 1], got 'spread(0.5d)'",
        "spread(1e-1)       | jitter factor must be a number in [0, 1], got 'spread(1e-1)'",
    })
    void aBadNameIsRefusedNamingTheFieldAndTheValue(String text, String message) {
        assertThatThrownBy(() -> Jitter.parse(text)).isInstanceOf(IllegalArgumentException.class).hasMessage(message);
    }

    @Test
    void aLongBadValueIsEchoedOnlyAsAShortPrefix() {
        String text = "x".repeat(10_000);
        assertThatThrownBy(() -> Jitter.parse(text))
                .hasMessageEndingWith("got '" + "x".repeat(32) + "...' (10000 chars)");
        assertThatThrownBy(() -> BackoffSpec.defaults().withType(text))
                .hasMessageStartingWith("type must be exponential, fixed, linear, decorrelated or none, got '")
                .hasMessageEndingWith("...' (10000 chars)");
    }

    @Test
    void aNullNameIsRefusedNamingTheField() {
        assertThatThrownBy(() -> Jitter.parse(null)).isInstanceOf(NullPointerException.class)
                .hasMessage("jitter must not be null");
    }

    @Property
    void anyFactorInRangeIsReadBackExactly(@ForAll @DoubleRange(min = 0, max = 1) double f) {
        Assume.that(!Double.toString(f).contains("E")); // the vocabulary writes plain decimals
        assertThat(Jitter.parse("spread(" + f + ")")).hasToString("spread(" + f + ")");
        assertThat(Jitter.parse("proportional(" + f + ")")).hasToString("proportional(" + f + ")");
    }

    @Property
    void anyTextIsEitherAJitterOrARefusalThatNamesTheField(@ForAll @StringLength(max = 80) String text) {
        try {
            assertThat(Jitter.parse(text)).isNotNull();
        } catch (IllegalArgumentException e) {
            assertThat(e.getMessage()).startsWith("jitter");
            assertThat(e.getMessage().length()).isLessThan(160);
        }
    }

    @Test
    void theDefaultsAreTheDefaultPolicysBackoff() {
        ExponentialBackoff spec = (ExponentialBackoff) BackoffSpec.defaults().toBackoff();
        ExponentialBackoff policy = (ExponentialBackoff) RetryPolicy.DEFAULT_BACKOFF;
        assertThat(spec).hasToString(policy.toString());
        assertThat(spec.jitter()).isSameAs(Jitter.full());
        assertThat(BackoffSpec.defaults().type()).isEqualTo("exponential");
    }

    @Test
    void eachFieldReachesItsBackoff() {
        BackoffSpec spec = BackoffSpec.defaults().withBase(Duration.ofMillis(50)).withMultiplier(3)
                .withMaxDelay(Duration.ofSeconds(2)).withJitter("equal");
        assertThat(spec.toBackoff()).hasToString(Backoff.exponential(Duration.ofMillis(50)).multiplier(3)
                .maxDelay(Duration.ofSeconds(2)).jitter(Jitter.equal()).toString());
        assertThat(spec.withType("fixed").toBackoff()).isInstanceOf(FixedBackoff.class);
        assertThat(((FixedBackoff) spec.withType("fixed").toBackoff()).delay()).isEqualTo(Duration.ofMillis(50));
        assertThat(spec.withType("none").toBackoff()).isSameAs(Backoff.none());
        assertThat(spec.withType("Linear").withStep(Duration.ofMillis(10)).toBackoff())
                .hasToString(Backoff.linear(Duration.ofMillis(50), Duration.ofMillis(10)).maxDelay(Duration.ofSeconds(2))
                        .jitter(Jitter.equal()).toString());
        assertThat(spec.withType("decorrelated").toBackoff())
                .hasToString(Backoff.decorrelated(Duration.ofMillis(50), Duration.ofSeconds(2)).toString());
    }

    @Test
    void linearAndFixedAreUncappedUnlessAMaxDelayIsSet() {
        BackoffSpec spec = BackoffSpec.defaults().withBase(Duration.ofMillis(50));
        assertThat(spec.withType("linear").toBackoff().maxDelay()).isEqualTo(Duration.ofNanos(Long.MAX_VALUE));
        assertThat(spec.withType("exponential").toBackoff().maxDelay()).isEqualTo(Duration.ofSeconds(5));
        assertThat(spec.withType("decorrelated").toBackoff().maxDelay()).isEqualTo(Duration.ofSeconds(5));
    }

    @Test
    void theJitterNameDecorrelatedSelectsTheDecorrelatedType() {
        BackoffSpec spec = BackoffSpec.defaults().withJitter(" Decorrelated ");
        assertThat(spec.type()).isEqualTo("decorrelated");
        assertThat(spec.toBackoff()).hasToString(Backoff.decorrelated(Duration.ofMillis(200), Duration.ofSeconds(5)).toString());
    }

    @Test
    void aJitterFactorFillsInOnlyWhereTheNameGivesNone() {
        BackoffSpec spec = BackoffSpec.defaults().withJitterFactor(0.4);
        assertThat(((ExponentialBackoff) spec.withJitter("spread").toBackoff()).jitter()).hasToString("spread(0.4)");
        assertThat(((ExponentialBackoff) spec.withJitter("proportional").toBackoff()).jitter()).hasToString("proportional(0.4)");
        assertThat(((ExponentialBackoff) spec.withJitter("spread(0.1)").toBackoff()).jitter()).hasToString("spread(0.1)");
        assertThat(((ExponentialBackoff) spec.withJitter("equal").toBackoff()).jitter()).isSameAs(Jitter.equal());
        assertThat(((ExponentialBackoff) spec.toBackoff()).jitter()).isSameAs(Jitter.full());
    }

    @Test
    void badFieldsAreRefusedNamingTheFieldAndTheValue() {
        BackoffSpec spec = BackoffSpec.defaults();
        assertThatThrownBy(() -> spec.withType("cubic"))
                .hasMessage("type must be exponential, fixed, linear, decorrelated or none, got 'cubic'");
        assertThatThrownBy(() -> spec.withBase(Duration.ZERO)).hasMessage("base must be positive, got PT0S");
        assertThatThrownBy(() -> spec.withMultiplier(0.5)).hasMessage("multiplier must be a finite number >= 1.0, got 0.5");
        assertThatThrownBy(() -> spec.withStep(Duration.ofMillis(-1))).hasMessage("step must not be negative, got PT-0.001S");
        assertThatThrownBy(() -> spec.withMaxDelay(Duration.ZERO)).hasMessage("maxDelay must be positive, got PT0S");
        assertThatThrownBy(() -> spec.withJitterFactor(2)).hasMessage("jitter factor must be in [0, 1], got 2.0");
        assertThatThrownBy(() -> spec.withJitter("wild")).hasMessage(
                "jitter must be none, full, equal, proportional, proportional(f), spread or spread(f), or decorrelated, got 'wild'");
        assertThatThrownBy(() -> spec.withType("decorrelated").withBase(Duration.ofSeconds(10)).toBackoff())
                .hasMessage("cap must be >= base, got cap=PT5S base=PT10S");
    }
}
