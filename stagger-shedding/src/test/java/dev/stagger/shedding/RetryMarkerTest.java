package dev.stagger.shedding;

import static dev.stagger.shedding.support.FakeRequest.withHeader;
import static dev.stagger.shedding.support.FakeRequest.withHeaders;
import static dev.stagger.shedding.support.FakeRequest.withoutHeaders;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;
import org.junit.jupiter.api.Test;

class RetryMarkerTest {

    @Test
    void theAttemptHeaderMarksAttemptsAfterTheFirst() {
        RetryMarker marker = RetryMarker.attemptHeader();
        assertThat(marker.isRetry(withHeader("Stagger-Attempt", "2"))).isTrue();
        assertThat(marker.isRetry(withHeader("Stagger-Attempt", " 17 "))).isTrue();
        assertThat(marker.isRetry(withHeader("Stagger-Attempt", "1"))).isFalse();
        assertThat(marker.isRetry(withoutHeaders())).isFalse();
    }

    @Test
    void aMalformedAttemptNumberCountsAsAFirstAttempt() {
        RetryMarker marker = RetryMarker.attemptHeader();
        for (String bad : new String[] {"", "two", "-3", "2.0", "99999999999999999999", "0x2"}) {
            assertThat(marker.isRetry(withHeader("Stagger-Attempt", bad))).as(bad).isFalse();
        }
    }

    @Test
    void anotherAttemptHeaderCanBeNamed() {
        RetryMarker marker = RetryMarker.attemptHeader("X-Envoy-Attempt-Count");
        assertThat(marker.isRetry(withHeader("X-Envoy-Attempt-Count", "3"))).isTrue();
        assertThat(marker.isRetry(withHeader("Stagger-Attempt", "3"))).isFalse();
    }

    @Test
    void anIdempotencyKeySeenBeforeMarksARetry() {
        RetryMarker marker = RetryMarker.repeatedIdempotencyKey();
        assertThat(marker.isRetry(withHeader("Idempotency-Key", "\"order-1\""))).isFalse();
        assertThat(marker.isRetry(withHeader("Idempotency-Key", "\"order-2\""))).isFalse();
        assertThat(marker.isRetry(withHeader("Idempotency-Key", "\"order-1\""))).isTrue();
        assertThat(marker.isRetry(withoutHeaders())).isFalse();
    }

    @Test
    void eachRepeatedKeyMarkerRemembersItsOwnKeys() {
        RetryMarker one = RetryMarker.repeatedIdempotencyKey();
        RetryMarker other = RetryMarker.repeatedIdempotencyKey();
        one.isRetry(withHeader("Idempotency-Key", "k"));
        assertThat(other.isRetry(withHeader("Idempotency-Key", "k"))).isFalse();
    }

    @Test
    void orAsksBothSoTheKeyIsRememberedEvenWhenTheAttemptHeaderAlreadySaidRetry() {
        RetryMarker marker = RetryMarker.attemptHeader().or(RetryMarker.repeatedIdempotencyKey());
        assertThat(marker.isRetry(withHeaders(Map.of("Stagger-Attempt", "2", "Idempotency-Key", "k")))).isTrue();
        assertThat(marker.isRetry(withHeader("Idempotency-Key", "k"))).isTrue();
        assertThat(marker.isRetry(withHeader("Idempotency-Key", "fresh"))).isFalse();
    }

    @Test
    void noneMarksNothing() {
        assertThat(RetryMarker.none().isRetry(withHeader("Stagger-Attempt", "5"))).isFalse();
    }

    @Test
    void badHeaderNamesAndCapacitiesAreRefusedNamingTheValue() {
        assertThatThrownBy(() -> RetryMarker.attemptHeader("Bad Header"))
                .isInstanceOf(IllegalArgumentException.class).hasMessage("headerName must be an HTTP header name, got \"Bad Header\"");
        assertThatThrownBy(() -> RetryMarker.attemptHeader("x".repeat(300)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("(300 characters)");
        assertThatThrownBy(() -> RetryMarker.repeatedKey("Idempotency-Key", 0))
                .isInstanceOf(IllegalArgumentException.class).hasMessage("capacity must be at least 1, got 0");
        assertThatThrownBy(() -> RetryMarker.repeatedKey("Idempotency-Key", (1 << 24) + 1))
                .isInstanceOf(IllegalArgumentException.class).hasMessage("capacity must be at most 16777216, got 16777217");
        assertThatThrownBy(() -> RetryMarker.attemptHeader(null))
                .isInstanceOf(NullPointerException.class).hasMessage("headerName must not be null");
        assertThatThrownBy(() -> RetryMarker.none().or(null))
                .isInstanceOf(NullPointerException.class).hasMessage("other must not be null");
    }
}
