package dev.stagger.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The one argument-check helper: a null names the field; a bad value names the field and the value. */
class ChecksTest {

    @Test
    void aNullIsANullPointerExceptionNamingTheField() {
        assertThatThrownBy(() -> Checks.notNull("listener", null))
                .isInstanceOf(NullPointerException.class).hasMessage("listener must not be null");
        assertThatThrownBy(() -> Checks.notBlank("service", null))
                .isInstanceOf(NullPointerException.class).hasMessage("service must not be null");
        assertThatThrownBy(() -> Checks.positive("window", (Duration) null))
                .isInstanceOf(NullPointerException.class).hasMessage("window must not be null");
    }

    @Test
    void aBoundIsNamedWithTheValue() {
        assertThatThrownBy(() -> Checks.atMost("buckets", 1001, 1000))
                .isInstanceOf(IllegalArgumentException.class).hasMessage("buckets must be at most 1000, got 1001");
        assertThat(Checks.atMost("buckets", 1000, 1000)).isEqualTo(1000);
        assertThatThrownBy(() -> Checks.between("jitter", 1.5, 0.0, 1.0))
                .hasMessage("jitter must be in [0.0, 1.0], got 1.5");
        assertThatThrownBy(() -> Checks.inside("ratio", 1.0, 0.0, 1.0))
                .hasMessage("ratio must be in (0.0, 1.0), got 1.0");
        assertThatThrownBy(() -> Checks.positive("rate", Double.POSITIVE_INFINITY))
                .hasMessage("rate must be a positive number, got Infinity");
        assertThatThrownBy(() -> Checks.notBelow("maxLimit", 5, "minLimit", 10))
                .hasMessage("maxLimit must be at least minLimit 10, got 5");
    }

    @Test
    void aLongTextIsEchoedAsItsFirst64CharactersAndItsLength() {
        String blank = " ".repeat(100);
        assertThatThrownBy(() -> Checks.notBlank("service", blank))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("service must not be blank, got \"" + " ".repeat(64) + "...\" (100 characters)");
        assertThatThrownBy(() -> Checks.notBlank("service", " "))
                .hasMessage("service must not be blank, got \" \"");
    }

    @Test
    void durationsInMillisecondsRefuseWhatTheyCannotHold() {
        assertThat(Checks.millis("ttl", Duration.ofSeconds(2))).isEqualTo(2000);
        assertThatThrownBy(() -> Checks.millis("ttl", Duration.ofSeconds(Long.MAX_VALUE)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageStartingWith("ttl is too long, got PT");
        assertThatThrownBy(() -> Checks.wholeSeconds("minRetryAfter", Duration.ofMillis(1500), 0, 10))
                .hasMessage("minRetryAfter must be whole seconds from 0 s to 10 s, got PT1.5S");
    }

    @Test
    void aNonEmptyListIsCopied() {
        List<String> names = new ArrayList<>(List.of("a"));
        List<String> copy = Checks.nonEmpty("setups", names);
        names.add("b");
        assertThat(copy).containsExactly("a");
        assertThatThrownBy(() -> Checks.nonEmpty("setups", List.of()))
                .hasMessage("setups must not be empty, got []");
    }
}
