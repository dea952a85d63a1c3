package dev.stagger.http.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class RetryAfterTest {
    private static final Duration MAX = Duration.ofMinutes(5);
    /** 1994-11-06T08:49:30Z, seven seconds before the RFC's example date. */
    private static final long NOW = Instant.parse("1994-11-06T08:49:30Z").toEpochMilli();

    @Test
    void readsDelaySeconds() {
        assertThat(RetryAfter.parse("120", NOW, MAX)).contains(Duration.ofSeconds(120));
    }

    @Test
    void readsZeroSecondsAsRetryNow() {
        assertThat(RetryAfter.parse("0", NOW, MAX)).contains(Duration.ZERO);
    }

    @Test
    void readsAnImfFixdateRelativeToNow() {
        assertThat(RetryAfter.parse("Sun, 06 Nov 1994 08:49:37 GMT", NOW, MAX)).contains(Duration.ofSeconds(7));
    }

    @Test
    void readsTheObsoleteRfc850Date() {
        assertThat(RetryAfter.parse("Sunday, 06-Nov-94 08:49:37 GMT", NOW, MAX)).contains(Duration.ofSeconds(7));
    }

    @Test
    void readsTheObsoleteAsctimeDate() {
        assertThat(RetryAfter.parse("Sun Nov  6 08:49:37 1994", NOW, MAX)).contains(Duration.ofSeconds(7));
    }

    @Test
    void aDateInThePastMeansNoExtraWait() {
        assertThat(RetryAfter.parse("Sun, 06 Nov 1994 08:00:00 GMT", NOW, MAX)).contains(Duration.ZERO);
    }

    @ParameterizedTest
    @ValueSource(strings = {"-5", "+5", "1.5", "soon", "5 s", "", "  ", "Sun, 32 Nov 1994 08:49:37 GMT", "0x10"})
    void ignoresNegativeAndUnparseableValues(String value) {
        assertThat(RetryAfter.parse(value, NOW, MAX)).isEmpty();
    }

    @Test
    void ignoresAnAbsentHeader() {
        assertThat(RetryAfter.parse(null, NOW, MAX)).isEmpty();
    }

    @Test
    void clampsAbsurdDelaySecondsToTheMaximum() {
        assertThat(RetryAfter.parse("86400", NOW, MAX)).contains(MAX);
    }

    @Test
    void clampsDelaySecondsTooLargeForALongWithoutOverflowing() {
        assertThat(RetryAfter.parse("99999999999999999999999", NOW, MAX)).contains(MAX);
    }

    @Test
    void clampsAFarFutureDateToTheMaximum() {
        assertThat(RetryAfter.parse("Fri, 31 Dec 2100 23:59:59 GMT", NOW, MAX)).contains(MAX);
    }

    @Test
    void trimsSurroundingWhitespace() {
        assertThat(RetryAfter.parse(" 3 ", NOW, MAX)).contains(Duration.ofSeconds(3));
    }
}
