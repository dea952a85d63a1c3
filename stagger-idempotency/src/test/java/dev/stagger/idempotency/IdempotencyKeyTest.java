package dev.stagger.idempotency;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class IdempotencyKeyTest {

    @Test
    void acceptsAnRfc8941StringAndDropsTheQuotes() {
        assertThat(IdempotencyKey.parse("\"8e03978e-40d5-43e8-bc93-6894a57f9324\"").orElseThrow().value())
                .isEqualTo("8e03978e-40d5-43e8-bc93-6894a57f9324");
    }

    @Test
    void acceptsABareTokenAsTheSameKey() {
        assertThat(IdempotencyKey.parse("8e03978e-40d5")).isEqualTo(IdempotencyKey.parse("\"8e03978e-40d5\""));
    }

    @Test
    void ignoresSurroundingWhitespace() {
        assertThat(IdempotencyKey.parse(" \t\"abc\" ").orElseThrow().value()).isEqualTo("abc");
    }

    @Test
    void acceptsExactly255CharactersAndRefuses256() {
        assertThat(IdempotencyKey.parse("a".repeat(255))).isPresent();
        assertThat(IdempotencyKey.parse("a".repeat(256))).isEmpty();
        assertThat(IdempotencyKey.parse("\"" + "a".repeat(256) + "\"")).isEmpty();
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "\"\"", "\"abc", "abc\"", "\"ab\"c\"", "\"abc\";p=1", "\"a\\b\"", "a b",
        "abc'", "abc;DROP", "1' OR '1'='1", "x%00", "a\u0000b", "a\rb", "a\nb", "\u00e9t\u00e9", "`id`", "<script>",
        "a\\\"b", "\"\\\"quoted\\\"\"", "*"})
    void refusesMalformedOrHostileValues(String value) {
        assertThat(IdempotencyKey.parse(value)).isEmpty();
    }

    @Test
    void refusesNullAndTenKilobyteValues() {
        assertThat(IdempotencyKey.parse(null)).isEmpty();
        assertThat(IdempotencyKey.parse("a".repeat(10_240))).isEmpty();
    }

    @Test
    void ofNamesTheFieldWhenTheValueIsInvalid() {
        assertThatThrownBy(() -> IdempotencyKey.of("bad key")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("value");
    }

    @Test
    void toHeaderValueIsAnRfc8941String() {
        assertThat(IdempotencyKey.of("order:42").toHeaderValue()).isEqualTo("\"order:42\"");
    }

    @Property
    void everyValueFromTheAlphabetRoundTripsThroughTheHeaderForm(@ForAll("validValues") String value) {
        IdempotencyKey key = IdempotencyKey.of(value);
        assertThat(IdempotencyKey.parse(key.toHeaderValue())).contains(key);
        assertThat(IdempotencyKey.parse(value)).contains(key);
    }

    @Property
    void anyCharacterOutsideTheAlphabetMakesTheKeyInvalid(@ForAll("shorterValues") String value,
                                                         @ForAll("foreignChars") char foreign) {
        String hostile = "k" + foreign + value; // inside the value: surrounding whitespace is legitimately trimmed
        assertThat(IdempotencyKey.parse(hostile)).isEmpty();
        assertThat(IdempotencyKey.parse("\"" + hostile + "\"")).isEmpty();
    }

    @Provide
    Arbitrary<String> validValues() {
        return Arbitraries.strings().withChars("abcXYZ0189-_.:~+/=").ofMinLength(1).ofMaxLength(255);
    }

    @Provide
    Arbitrary<String> shorterValues() {
        return Arbitraries.strings().withChars("abcXYZ0189-_.:~+/=").ofMinLength(1).ofMaxLength(200);
    }

    @Provide
    Arbitrary<Character> foreignChars() {
        return Arbitraries.chars().filter(c -> !((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
                || "-_.:~+/=".indexOf(c) >= 0));
    }
}
