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
}
