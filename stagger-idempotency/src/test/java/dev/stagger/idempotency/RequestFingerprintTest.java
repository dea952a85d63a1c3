package dev.stagger.idempotency;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.Map;
import org.junit.jupiter.api.Test;

class RequestFingerprintTest {
    private static final Map<String, String> JSON = Map.of("Content-Type", "application/json");

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    @Test
    void identicalRequestsHaveTheSameFingerprint() {
        assertThat(RequestFingerprint.of("POST", "/orders", "a=1", JSON, bytes("{}")))
                .isEqualTo(RequestFingerprint.of("post", "/orders", "a=1", Map.of("content-type", "application/json"), bytes("{}")));
    }

    @Test
    void everyPartOfTheRequestChangesTheFingerprint() {
        RequestFingerprint base = RequestFingerprint.of("POST", "/orders", "a=1", JSON, bytes("{}"));

        assertThat(RequestFingerprint.of("PATCH", "/orders", "a=1", JSON, bytes("{}"))).isNotEqualTo(base);
        assertThat(RequestFingerprint.of("POST", "/orders/1", "a=1", JSON, bytes("{}"))).isNotEqualTo(base);
        assertThat(RequestFingerprint.of("POST", "/orders", "a=2", JSON, bytes("{}"))).isNotEqualTo(base);
        assertThat(RequestFingerprint.of("POST", "/orders", null, JSON, bytes("{}"))).isNotEqualTo(base);
        assertThat(RequestFingerprint.of("POST", "/orders", "a=1", Map.of("Content-Type", "text/plain"), bytes("{}")))
                .isNotEqualTo(base);
        assertThat(RequestFingerprint.of("POST", "/orders", "a=1", JSON, bytes("{ }"))).isNotEqualTo(base);
    }

    @Test
    void bytesMovedBetweenFieldsChangeTheFingerprint() {
        assertThat(RequestFingerprint.of("POST", "/ab", "", Map.of(), bytes("c")))
                .isNotEqualTo(RequestFingerprint.of("POST", "/a", "", Map.of(), bytes("bc")));
    }

    @Test
    void survivesARoundTripThroughItsHexForm() {
        RequestFingerprint fp = RequestFingerprint.of("POST", "/orders", null, JSON, bytes("{}"));
        assertThat(RequestFingerprint.fromHex(fp.hex())).isEqualTo(fp);
        assertThat(fp.hex()).hasSize(64);
    }

    private static final Map<String, String> FORM = Map.of("Content-Type", "application/x-www-form-urlencoded");

    private static RequestFingerprint form(Map<String, String[]> parameters) {
        return RequestFingerprint.ofForm("POST", "/orders", null, FORM, parameters, new byte[0], 0);
    }

    @Test
    void aFormIsFingerprintedByItsParametersWhateverTheOrderOfTheirNames() {
        Map<String, String[]> ab = new java.util.LinkedHashMap<>();
        ab.put("a", new String[] {"1"});
        ab.put("b", new String[] {"2"});
        Map<String, String[]> ba = new java.util.LinkedHashMap<>();
        ba.put("b", new String[] {"2"});
        ba.put("a", new String[] {"1"});

        assertThat(form(ab)).isEqualTo(form(ba));
    }

    @Test
    void everyFormValueAndTheOrderOfOneNamesValuesChangeTheFingerprint() {
        RequestFingerprint base = form(Map.of("a", new String[] {"1", "2"}));

        assertThat(form(Map.of("a", new String[] {"2", "1"}))).isNotEqualTo(base);
        assertThat(form(Map.of("a", new String[] {"1"}))).isNotEqualTo(base);
        assertThat(form(Map.of("a", new String[] {"1", "2"}, "b", new String[] {""}))).isNotEqualTo(base);
        assertThat(form(Map.of("a", new String[] {"12"}))).isNotEqualTo(base);
        assertThat(form(Map.of())).isNotEqualTo(RequestFingerprint.of("POST", "/orders", null, FORM, new byte[0]));
    }
}
