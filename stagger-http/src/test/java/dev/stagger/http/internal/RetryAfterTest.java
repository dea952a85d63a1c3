package dev.stagger.http.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
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

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {
        "Mon, 06 Nov 1994 08:49:37 GMT",   // 6 November 1994 was a Sunday
        "Monday, 06-Nov-94 08:49:37 GMT",
        "Mon Nov  6 08:49:37 1994",
        "Sat, 06 Nov 1994 08:49:37 GMT",
        "Sat Nov  6 08:49:37 1994",
    })
    void acceptsAWrongWeekdayAsRfc9110AsksRecipientsToBeLenient(String value) {
        assertThat(RetryAfter.parse(value, NOW, MAX)).contains(Duration.ofSeconds(7));
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {
        "Xyz, 06 Nov 1994 08:49:37 GMT",
        "Someday, 06-Nov-94 08:49:37 GMT",
        "Xyz Nov  6 08:49:37 1994",
        "Sun Foo  6 08:49:37 1994",
        "Sun Nov 31 08:49:37 1994",
        "Sun Nov  6 24:00:00 1994",
        "Sunday, 06-Nov-94 08:61:37 GMT",
        "Sunday, 06-Nov-94 08:49:37",
    })
    void stillIgnoresADateThatIsNotADate(String value) {
        assertThat(RetryAfter.parse(value, NOW, MAX)).isEmpty();
    }

    @ParameterizedTest(name = "now {0}: {1} is {2}")
    @CsvSource(delimiter = '|', value = {
        // the nearest year not more than 50 years after the moment the header was received
        "2025-06-01T00:00:00Z | Sunday, 01-Jun-75 00:00:00 GMT | 2075-06-01T00:00:00Z",
        "2025-06-01T00:00:00Z | Sunday, 01-Jun-75 00:00:01 GMT | 1975-06-01T00:00:01Z",
        "2025-06-01T00:00:00Z | Friday, 31-May-75 23:59:59 GMT | 2075-05-31T23:59:59Z",
        "2025-06-01T00:00:00Z | Monday, 01-Jan-74 00:00:00 GMT | 2074-01-01T00:00:00Z",
        "2025-06-01T00:00:00Z | Monday, 01-Jan-76 00:00:00 GMT | 1976-01-01T00:00:00Z",
        "2025-06-01T00:00:00Z | Monday, 01-Jan-70 00:00:00 GMT | 2070-01-01T00:00:00Z",
        "2025-06-01T00:00:00Z | Sunday, 01-Jun-25 00:00:00 GMT | 2025-06-01T00:00:00Z",
        "2025-06-01T00:00:00Z | Saturday, 01-Jan-00 00:00:00 GMT | 2000-01-01T00:00:00Z",
        "2025-06-01T00:00:00Z | Friday, 01-Jan-99 00:00:00 GMT | 1999-01-01T00:00:00Z",
        "2025-06-01T00:00:00Z | Tuesday, 29-Feb-00 12:00:00 GMT | 2000-02-29T12:00:00Z",
        "1994-11-06T08:49:30Z | Sunday, 06-Nov-94 08:49:37 GMT | 1994-11-06T08:49:37Z",
        "1994-11-06T08:49:30Z | Saturday, 01-Jan-44 00:00:00 GMT | 2044-01-01T00:00:00Z",
        "1994-11-06T08:49:30Z | Saturday, 01-Jan-45 00:00:00 GMT | 1945-01-01T00:00:00Z",
        "2090-01-01T00:00:00Z | Sunday, 01-Jan-35 00:00:00 GMT | 2135-01-01T00:00:00Z",
        "2090-01-01T00:00:00Z | Sunday, 01-Jan-40 00:00:00 GMT | 2140-01-01T00:00:00Z",
        "2090-01-01T00:00:00Z | Sunday, 01-Jan-40 00:00:01 GMT | 2040-01-01T00:00:01Z",
        "2099-12-31T23:59:59Z | Friday, 01-Jan-00 00:00:00 GMT | 2100-01-01T00:00:00Z",
        "2099-12-31T23:59:59Z | Friday, 31-Dec-49 23:59:59 GMT | 2149-12-31T23:59:59Z",
        "2099-12-31T23:59:59Z | Friday, 01-Jan-50 00:00:00 GMT | 2050-01-01T00:00:00Z",
        "2100-01-01T00:00:00Z | Friday, 31-Dec-99 23:59:59 GMT | 2099-12-31T23:59:59Z",
    })
    void readsAnRfc850TwoDigitYearAsTheNearestYearNotMoreThanFiftyYearsAhead(Instant now, String value,
                                                                             Instant expected) {
        assertThat(RetryAfter.parseDate(value, now.toEpochMilli())).contains(expected);
    }

    @Test
    void readsTheDashedFormWithAFourDigitYearAsWritten() {
        assertThat(RetryAfter.parseDate("Sunday, 06-Nov-1994 08:49:37 GMT", NOW))
                .contains(Instant.parse("1994-11-06T08:49:37Z"));
    }

    @Test
    void aTwoDigitYearReadsRelativeToTheClockNotToAFixedCentury() {
        long in2090 = Instant.parse("2090-01-01T00:00:00Z").toEpochMilli();
        // 2035 would be 55 years in the past; 2135 is 45 years ahead
        assertThat(RetryAfter.parse("Sunday, 01-Jan-35 00:00:00 GMT", in2090, MAX)).contains(MAX);
    }

    @Test
    void ignoresFebruaryTheTwentyNinthInAYearThatHasNone() {
        // read as 2100 (not more than 50 years after 2051), which is not a leap year
        long in2051 = Instant.parse("2051-01-01T00:00:00Z").toEpochMilli();
        assertThat(RetryAfter.parseDate("Monday, 29-Feb-00 00:00:00 GMT", in2051)).isEmpty();
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
        "Sun Nov  6 08:49:37 1994  | 1994-11-06T08:49:37Z",
        "Sun Nov 06 08:49:37 1994  | 1994-11-06T08:49:37Z",
        "Thu Nov 10 08:49:37 1994  | 1994-11-10T08:49:37Z",
        "Sat Jan  1 00:00:00 2000  | 2000-01-01T00:00:00Z",
        "Fri Dec 31 23:59:59 1999  | 1999-12-31T23:59:59Z",
        "Tue Feb 29 12:00:00 2000  | 2000-02-29T12:00:00Z",
        "Fri Jan  1 00:00:00 2100  | 2100-01-01T00:00:00Z",
        "sun nov  6 08:49:37 1994  | 1994-11-06T08:49:37Z",
    })
    void readsTheAsctimeFormatWithItsFourDigitYearAsWritten(String value, Instant expected) {
        assertThat(RetryAfter.parseDate(value, NOW)).contains(expected);
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
        "Sun, 06 Nov 1994 08:49:37 GMT   | 1994-11-06T08:49:37Z",
        "Sat, 01 Jan 2000 00:00:00 GMT   | 2000-01-01T00:00:00Z",
        "Fri, 31 Dec 1999 23:59:59 GMT   | 1999-12-31T23:59:59Z",
        "Mon, 29 Feb 2100 00:00:00 GMT   | ",
        "Sun, 6 Nov 1994 08:49:37 GMT    | 1994-11-06T08:49:37Z",
        "06 Nov 1994 08:49:37 GMT        | 1994-11-06T08:49:37Z",
        "Sun, 06 Nov 1994 09:49:37 +0100 | 1994-11-06T08:49:37Z",
        "Sun, 06 Nov 1994 08:49 GMT      | 1994-11-06T08:49:00Z",
        "Wed, 31 Dec 2008 23:59:60 GMT   | 2009-01-01T00:00:00Z",
    })
    void readsTheImfFixdateAndTheRfc1123FormsAroundIt(String value, Instant expected) {
        if (expected == null) {
            assertThat(RetryAfter.parseDate(value, NOW)).isEmpty();
        } else {
            assertThat(RetryAfter.parseDate(value, NOW)).contains(expected);
        }
    }

    @Test
    void ignoresAnOverlongValueWithoutReadingItAll() {
        assertThat(RetryAfter.parse("Sun, 06 Nov 1994 08:49:37 GMT" + " ".repeat(100_000) + "x", NOW, MAX)).isEmpty();
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
